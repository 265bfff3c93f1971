/**
 * Saving schedules and escalation policies. The contract has no update for
 * either (createSchedule/deleteSchedule, createEscalationPolicy/
 * deleteEscalationPolicy only), so an edit replaces the record: the new one is
 * created first — a refusal then changes nothing and is shown at its field —
 * and the old one is deleted last. A schedule's covers and the policies that
 * page it are carried over to the new schedule before the old one goes, so an
 * edit never leaves a step paging nobody. The edit is offered only to callers
 * who see everything (not confined to workspaces): a confined caller's view
 * of a policy can leave steps out, and a replacement would drop them.
 */
import { api, ok, type Schema } from './api';
import type { OnCallData } from './oncall';

type ScheduleBody = Schema<'CreateScheduleBody'>;
type PolicyBody = Schema<'CreateEscalationPolicyBody'>;
type Policy = Schema<'EscalationPolicy'>;

/** A failure after the new record exists: what was done, what was not, in the server's words. */
export class PartlySavedError extends Error {}

const words = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Creates a policy, then deletes `old` (if any); the new one takes over its monitors on creation. */
export async function savePolicy(body: PolicyBody, old: Policy | null): Promise<Policy> {
  const created = (await ok(api.POST('/on-call/escalation-policies', { body }))).data;
  if (old) {
    try {
      await ok(api.DELETE('/on-call/escalation-policies/{id}', { params: { path: { id: old.id } } }));
    } catch (e) {
      throw new PartlySavedError(`The policy was saved, but the previous version could not be removed: ${words(e)} Delete “${old.name}” by hand.`);
    }
  }
  return created;
}

/** The body that re-creates `p` with its steps paging schedule `to` instead of `from`. */
function repointed(p: Policy, from: string, to: string): PolicyBody {
  return {
    name: p.name, repeat: p.repeat, monitorIds: p.monitorIds,
    steps: p.steps.map((s) => ({
      afterMinutes: s.afterMinutes, targetType: s.targetType,
      targetId: s.targetType === 'schedule' && s.targetId === from ? to : s.targetId,
    })),
  };
}

/**
 * Creates a schedule; for an edit, carries the old one's covers and the
 * policies paging it over to the new one, then deletes the old one.
 */
export async function saveSchedule(body: ScheduleBody, old: { id: string; name: string; data: OnCallData } | null) {
  const created = (await ok(api.POST('/on-call/schedules', { body }))).data;
  if (!old) return created;
  let step = 'carrying its covers over';
  try {
    for (const o of old.data.overrides.filter((x) => x.scheduleId === old.id)) {
      await ok(api.POST('/on-call/overrides', { body: { scheduleId: created.id, userId: o.user.userId, startsAt: o.startsAt, endsAt: o.endsAt } }));
    }
    for (const p of old.data.escalationPolicies.filter((x) => x.steps.some((s) => s.targetType === 'schedule' && s.targetId === old.id))) {
      step = `pointing the escalation policy “${p.name}” at it`;
      await savePolicy(repointed(p, old.id, created.id), p);
    }
    step = 'removing the previous version';
    await ok(api.DELETE('/on-call/schedules/{id}', { params: { path: { id: old.id } } }));
  } catch (e) {
    throw new PartlySavedError(`The new schedule “${created.name}” was created, but ${step} failed: ${words(e)} The previous schedule “${old.name}” is kept; delete it once this is sorted out.`);
  }
  return created;
}
