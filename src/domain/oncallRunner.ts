import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { onCallAt } from '../alerting/oncall';
import { orgWideOrInWorkspaces } from '../repo/scope';
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
 * The channel ids one step pages at `at` for an incident of `workspaceId`:
 * only enabled, confirmed channels that workspace may use — its own and the
 * organisation-wide ones (workspace_id null), which include the channels a
 * person enrols for themselves (SMS and the like are stored organisation-wide).
 * schedule → such channels owned by whoever is on call (rotation or cover);
 * user → that person's; channel → the channel itself. A target that is gone,
 * or a channel of another workspace, gives [].
 *
 * Why not every channel the person owns: a channel stored with a workspace
 * belongs to that workspace (a webhook or a mailbox of a client) and a
 * caller confined to the incident's workspace could not see it — the same
 * rule as setMonitorChannels. It is also what keeps the timeline's delivery
 * notes naming only channels the incident's readers can see.
 */
export async function stepChannels(db: Db, organizationId: string, workspaceId: string, step: Step, at: Date): Promise<string[]> {
  const usable = orgWideOrInWorkspaces([workspaceId], sql.ref('c.workspace_id'));
  let userId: string | null = step.targetType === 'user' ? step.targetId : null;
  if (step.targetType === 'channel') {
    const rows = await db.selectFrom('notification_channels as c').select('c.id').where('c.organization_id', '=', organizationId).where('c.id', '=', step.targetId)
      .where('c.enabled', '=', true).where('c.confirmed_at', 'is not', null).where(usable).execute();
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
  const rows = await ownedChannels(db, organizationId).select('c.id').where('m.user_id', '=', userId).where(usable)
    .orderBy('c.created_at').orderBy('c.id').execute();
  return rows.map((r) => r.id);
}
