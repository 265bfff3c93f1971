import type { Db } from '../db/connect';
import { addEvent } from '../incidents/timeline';
import { queueDeliveries, type AlertSubject } from './dispatch';
import { enqueue } from '../jobs/queue';
import { policiesForMonitors, stepChannels } from '../domain/oncallRunner';
import { nextStep, stepDueAt } from './oncall';
import { underMaintenance } from './maintenance';

type Step = { afterMinutes: number; targetType: 'schedule' | 'user' | 'channel'; targetId: string };
type Policy = { id: string; name: string; repeat: number; steps: Step[] };

/** When the n-th step firing (counting across repeat rounds) is due; null after the last round. */
export function escalationDueAt(policy: Pick<Policy, 'repeat' | 'steps'>, n: number, startedAt: Date): Date | null {
  const next = nextStep(policy, n);
  return next ? stepDueAt(policy, next.stepIndex, next.round, startedAt) : null;
}

/**
 * Starts the escalation of newly opened incidents whose monitors have a policy
 * (in the opening transaction): one policy lookup per organisation.
 */
export async function startEscalations(db: Db, incidents: (AlertSubject & { started_at: Date })[]): Promise<void> {
  for (const orgId of new Set(incidents.map((i) => i.organization_id))) {
    const mine = incidents.filter((i) => i.organization_id === orgId && i.monitor_id !== null);
    const policies = await policiesForMonitors(db, orgId, mine.map((i) => i.monitor_id!));
    for (const incident of mine) {
      const p = policies.get(incident.monitor_id!);
      const due = p ? escalationDueAt(p, 0, incident.started_at) : null;
      if (!p || !due) continue;
      await db.updateTable('incidents').set({ escalation_policy_id: p.id, escalation_step: 0 }).where('id', '=', incident.id).execute();
      await enqueue(db, 'escalate', { incidentId: incident.id, n: 0 }, { runAt: due, jobKey: `escalate:${incident.id}` });
    }
  }
}

/**
 * The `escalate` task: while the incident is still open (not acknowledged,
 * resolved or suppressed), notify the step's targets — only channels the
 * incident's workspace may use (stepChannels) — record the step on the
 * timeline, and queue the next step.
 *
 * The timeline entry names neither the policy nor the target: a reader
 * confined to the incident's workspace may not see the policy (one that also
 * escalates other workspaces' monitors) or the target (another workspace's
 * schedule or channel). It says the step's number, its target's type and how
 * many channels were paged; each delivery adds its own note naming its
 * channel, which the incident's workspace may use and so its readers see.
 */
export function escalateTask(db: Db) {
  return async (payload: unknown): Promise<void> => {
    const { incidentId, n } = payload as { incidentId: string; n: number };
    await db.transaction().execute(async (tx) => {
      const inc = await tx.selectFrom('incidents').select(['id', 'organization_id', 'workspace_id', 'monitor_id', 'status', 'started_at', 'escalation_policy_id', 'escalation_step'])
        .where('id', '=', incidentId).forUpdate().executeTakeFirst();
      if (!inc || inc.status !== 'open' || inc.escalation_step !== n || !inc.escalation_policy_id) return;
      const row = await tx.selectFrom('escalation_policies').select(['id', 'name', 'repeat', 'steps']).where('id', '=', inc.escalation_policy_id).executeTakeFirst();
      if (!row) return;
      const policy: Policy = { id: row.id, name: row.name, repeat: row.repeat, steps: row.steps };
      const step = policy.steps[n % policy.steps.length];
      // A paused monitor or a maintenance window pages nobody: the step passes silently.
      const monitor = inc.monitor_id ? await tx.selectFrom('monitors').select('paused').where('id', '=', inc.monitor_id).executeTakeFirst() : undefined;
      const quiet = monitor?.paused || (inc.monitor_id !== null && (await underMaintenance(tx, [inc.monitor_id], new Date())).size > 0);
      const channels = quiet ? [] : await stepChannels(tx, inc.organization_id, inc.workspace_id, step, new Date());
      await queueDeliveries(tx, inc, 'incident.escalated', channels);
      await addEvent(tx, {
        incidentId, organizationId: inc.organization_id, kind: 'escalation',
        message: quiet
          ? `Escalation step ${(n % policy.steps.length) + 1} skipped (the monitor is paused or in maintenance).`
          : `Escalation step ${(n % policy.steps.length) + 1} (${step.targetType}) notified ${channels.length} channel${channels.length === 1 ? '' : 's'}.`,
      });
      await tx.updateTable('incidents').set({ escalation_step: n + 1 }).where('id', '=', incidentId).execute();
      const next = escalationDueAt(policy, n + 1, inc.started_at);
      if (next) await enqueue(tx, 'escalate', { incidentId, n: n + 1 }, { runAt: next, jobKey: `escalate:${incidentId}` });
    });
  };
}
