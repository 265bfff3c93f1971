import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { onCallAt } from '../alerting/oncall';
import { ownedChannels, type PolicyRow, type Step } from './oncallView';

/*
 * What the escalation runner (src/alerting/escalation.ts) asks of on-call:
 * which policy escalates a monitor, and which channels one step pages.
 */

/** The policy escalating `monitorId`'s incidents, or null. */
export async function policyForMonitor(db: Db, organizationId: string, monitorId: string): Promise<PolicyRow | null> {
  return (await policiesForMonitors(db, organizationId, [monitorId])).get(monitorId) ?? null;
}

/** The escalation policy of each of `monitorIds` (those that have one), in one query. */
export async function policiesForMonitors(db: Db, organizationId: string, monitorIds: readonly string[]): Promise<Map<string, PolicyRow>> {
  const out = new Map<string, PolicyRow>();
  if (monitorIds.length === 0) return out;
  const rows = await db.selectFrom('escalation_policies').selectAll().where('organization_id', '=', organizationId)
    .where(sql<SqlBool>`monitor_ids && ${sql.val([...monitorIds])}::text[]` as Expression<SqlBool>)
    .orderBy('created_at', 'desc').orderBy('id').execute();
  // Newest first: should a monitor appear in two policies, the newest one holds it.
  for (const r of rows) for (const m of r.monitor_ids) if (monitorIds.includes(m) && !out.has(m)) out.set(m, r);
  return out;
}

/**
 * For the escalation runner: channel ids one step notifies at `at`.
 * schedule → the enabled, confirmed channels owned by whoever is on call
 * (rotation or cover); user → that person's; channel → the channel itself
 * when enabled and confirmed. A target that is gone gives [].
 */
export async function stepChannels(db: Db, organizationId: string, step: Step, at: Date): Promise<string[]> {
  let userId: string | null = step.targetType === 'user' ? step.targetId : null;
  if (step.targetType === 'channel') {
    const rows = await db.selectFrom('notification_channels').select('id').where('organization_id', '=', organizationId).where('id', '=', step.targetId)
      .where('enabled', '=', true).where('confirmed_at', 'is not', null).execute();
    return rows.map((r) => r.id);
  }
  if (step.targetType === 'schedule') {
    const s = await db.selectFrom('oncall_schedules').selectAll().where('organization_id', '=', organizationId).where('id', '=', step.targetId).executeTakeFirst();
    if (!s) return [];
    const covers = await db.selectFrom('oncall_overrides').selectAll().where('organization_id', '=', organizationId).where('schedule_id', '=', s.id)
      .where('starts_at', '<=', at).where('ends_at', '>', at).execute();
    userId = onCallAt(s, covers, at).userId;
  }
  if (!userId) return [];
  const rows = await ownedChannels(db, organizationId).select('c.id').where('m.user_id', '=', userId).orderBy('c.created_at').orderBy('c.id').execute();
  return rows.map((r) => r.id);
}
