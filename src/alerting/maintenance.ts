/**
 * Which monitors maintenance windows hold right now. The rule arithmetic
 * (which rules repeat, and when) is src/alerting/recurrence.ts.
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { activeOccurrence } from './recurrence';

export * from './recurrence';

/** How a monitor is held by maintenance right now. */
export interface MaintenanceHold { keepChecking: boolean; windowId: string }

/**
 * Which of `monitorIds` are inside an active maintenance window at `at`.
 * Nobody is paged for these; when `keepChecking` is false they are not checked
 * either (false wins when windows overlap). One indexed query for candidates
 * (`monitor_ids && ids`, started, and either recurring or not yet ended), then
 * the occurrences are computed here.
 */
export async function underMaintenance(db: Db, monitorIds: readonly string[], at: Date): Promise<Map<string, MaintenanceHold>> {
  const held = new Map<string, MaintenanceHold>();
  if (monitorIds.length === 0) return held;
  const rows = await db.selectFrom('maintenance_windows')
    .select(['id', 'starts_at', 'ends_at', 'timezone', 'recurrence_rule', 'keep_checking', 'monitor_ids'])
    .where(sql<SqlBool>`monitor_ids && ${sql.val([...monitorIds])}::text[]` as Expression<SqlBool>)
    .where('starts_at', '<=', at)
    .where((eb) => eb.or([eb('ends_at', '>', at), eb('recurrence_rule', 'is not', null)]))
    .orderBy('id')
    .execute();
  const wanted = new Set(monitorIds);
  for (const r of rows) {
    const timing = { startsAt: r.starts_at, endsAt: r.ends_at, timezone: r.timezone, recurrenceRule: r.recurrence_rule };
    if (!activeOccurrence(timing, at)) continue;
    for (const id of r.monitor_ids) {
      if (!wanted.has(id)) continue;
      const before = held.get(id);
      if (!before || (before.keepChecking && !r.keep_checking)) held.set(id, { keepChecking: r.keep_checking, windowId: r.id });
    }
  }
  return held;
}
