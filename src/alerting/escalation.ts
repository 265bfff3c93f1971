import type { Db } from '../db/connect';
import { addEvent } from '../engine/incidents';
import { queueDeliveries, type AlertSubject } from './dispatch';
import { enqueue } from './queue';
import { stepChannels } from '../domain/oncall';
import { sql, type SqlBool } from 'kysely';
import { underMaintenance } from './maintenance';

type Step = { afterMinutes: number; targetType: 'schedule' | 'user' | 'channel'; targetId: string };
type Policy = { id: string; name: string; repeat: number; steps: Step[] };

const MIN_ROUND_MINUTES = 5;

/**
 * When the n-th step firing (counting across repeat rounds) is due: a step
 * fires `afterMinutes` after the incident opened, and each further round is
 * offset by the last step's `afterMinutes` (at least five minutes). Null
 * after the last round.
 */
export function escalationDueAt(policy: Pick<Policy, 'repeat' | 'steps'>, n: number, startedAt: Date): Date | null {
  const perRound = policy.steps.length;
  if (perRound === 0) return null;
  const round = Math.floor(n / perRound);
  if (round > policy.repeat) return null;
  const step = policy.steps[n % perRound];
  const roundMinutes = Math.max(policy.steps[perRound - 1].afterMinutes, MIN_ROUND_MINUTES);
  return new Date(startedAt.getTime() + (round * roundMinutes + step.afterMinutes) * 60_000);
}

/**
 * Starts the escalation of newly opened incidents whose monitors have a policy
 * (in the opening transaction): one policy lookup for all of them.
 */
export async function startEscalations(db: Db, incidents: (AlertSubject & { started_at: Date })[]): Promise<void> {
  const monitorIds = incidents.map((i) => i.monitor_id).filter((m): m is string => m !== null);
  if (monitorIds.length === 0) return;
  const policies = await db.selectFrom('escalation_policies').select(['id', 'name', 'repeat', 'steps', 'monitor_ids', 'organization_id'])
    .where('organization_id', 'in', [...new Set(incidents.map((i) => i.organization_id))])
    .where(sql<SqlBool>`monitor_ids && ${sql.val(monitorIds)}::text[]`).execute();
  for (const incident of incidents) {
    const p = policies.find((x) => x.organization_id === incident.organization_id && incident.monitor_id !== null && x.monitor_ids.includes(incident.monitor_id));
    if (!p) continue;
    const due = escalationDueAt({ repeat: p.repeat, steps: p.steps }, 0, incident.started_at);
    if (!due) continue;
    await db.updateTable('incidents').set({ escalation_policy_id: p.id, escalation_step: 0 }).where('id', '=', incident.id).execute();
    await enqueue(db, 'escalate', { incidentId: incident.id, n: 0 }, { runAt: due, jobKey: `escalate:${incident.id}` });
  }
}

/**
 * The `escalate` task: while the incident is still open (not acknowledged,
 * resolved or suppressed), notify the step's targets, record the step on the
 * timeline, and queue the next step.
 */
export function escalateTask(db: Db) {
  return async (payload: unknown): Promise<void> => {
    const { incidentId, n } = payload as { incidentId: string; n: number };
    await db.transaction().execute(async (tx) => {
      const inc = await tx.selectFrom('incidents').select(['id', 'organization_id', 'monitor_id', 'status', 'started_at', 'escalation_policy_id', 'escalation_step'])
        .where('id', '=', incidentId).forUpdate().executeTakeFirst();
      if (!inc || inc.status !== 'open' || inc.escalation_step !== n || !inc.escalation_policy_id) return;
      const row = await tx.selectFrom('escalation_policies').select(['id', 'name', 'repeat', 'steps']).where('id', '=', inc.escalation_policy_id).executeTakeFirst();
      if (!row) return;
      const policy: Policy = { id: row.id, name: row.name, repeat: row.repeat, steps: row.steps };
      const step = policy.steps[n % policy.steps.length];
      // A paused monitor or a maintenance window pages nobody: the step passes silently.
      const monitor = inc.monitor_id ? await tx.selectFrom('monitors').select('paused').where('id', '=', inc.monitor_id).executeTakeFirst() : undefined;
      const quiet = monitor?.paused || (inc.monitor_id !== null && (await underMaintenance(tx, [inc.monitor_id], new Date())).size > 0);
      const channels = quiet ? [] : await stepChannels(tx, inc.organization_id, step, new Date());
      await queueDeliveries(tx, inc, 'incident.escalated', channels);
      await addEvent(tx, {
        incidentId, organizationId: inc.organization_id, kind: 'escalation',
        message: quiet
          ? `${policy.name}: step ${(n % policy.steps.length) + 1} skipped (the monitor is paused or in maintenance).`
          : `${policy.name}: step ${(n % policy.steps.length) + 1} (${step.targetType}) notified ${channels.length} channel${channels.length === 1 ? '' : 's'}.`,
      });
      await tx.updateTable('incidents').set({ escalation_step: n + 1 }).where('id', '=', incidentId).execute();
      const next = escalationDueAt(policy, n + 1, inc.started_at);
      if (next) await enqueue(tx, 'escalate', { incidentId, n: n + 1 }, { runAt: next, jobKey: `escalate:${incidentId}` });
    });
  };
}
