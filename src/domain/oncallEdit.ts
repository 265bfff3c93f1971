import type { Caller } from '../auth/caller';
import { confinedRefusal, isConfined } from '../auth/confinement';
import type { Db } from '../db/connect';
import { notFound } from '../pipeline/errors';
import { audit, diff } from './audit';
import {
  checkParticipants, checkPolicy, MANAGE, POLICY_AUDITED, SCHEDULE_AUDITED, scheduleAudited, scheduleColumns, takeMonitors, writableSchedule,
  type PolicyFields, type ScheduleFields,
} from './oncall';
import { people, policyOut, scheduleOut, targetKey, targetNames, visiblePolicies } from './oncallView';

/*
 * On-call changes: PATCH of a schedule or a policy. Each field is checked by
 * the very function createSchedule / createEscalationPolicy use (./oncall.ts),
 * so a field is refused the same way on both writes; who may change what is
 * the rule of the deletes (./oncall.ts head): a record outside the caller's
 * reach answers like a made-up id, an organisation-wide one is refused to a
 * confined caller.
 */

/** The fields whose change restarts the rotation (the name alone does not). */
const ROTATION = ['timezone', 'shiftLengthHours', 'handoffTime', 'participantIds'];

/**
 * Changes a schedule's fields given; overrides and the steps naming it stay.
 * A change of the rotation restarts it from now as creating does (hand-over
 * 0 is the last one on or before the change, with the first participant):
 * `rotation_from`, read by src/alerting/oncall.ts.
 */
export async function updateSchedule(db: Db, caller: Caller, id: string, input: ScheduleFields, now: Date) {
  const before = await writableSchedule(db, caller, id, 'id');
  const columns = scheduleColumns(input);
  if (input.participantIds !== undefined) await checkParticipants(db, caller, input.participantIds);
  const row = await db.transaction().execute(async (tx) => {
    const locked = await tx.selectFrom('oncall_schedules').selectAll().where('id', '=', id)
      .where('organization_id', '=', caller.organizationId).forUpdate().executeTakeFirst();
    if (!locked) throw notFound('schedule', 'id');
    const after = { ...locked, ...columns, ...(input.participantIds ? { participant_ids: input.participantIds } : {}) };
    const changes = diff(scheduleAudited(locked), scheduleAudited(after), SCHEDULE_AUDITED);
    if (Object.keys(changes).length === 0) return locked;
    const restart = ROTATION.some((f) => f in changes);
    const r = await tx.updateTable('oncall_schedules')
      .set({ ...columns, participant_ids: after.participant_ids, ...(restart ? { rotation_from: now } : {}) })
      .where('id', '=', id).where('organization_id', '=', caller.organizationId).returningAll().executeTakeFirstOrThrow();
    await audit(tx, caller, { action: 'oncall.schedule_updated', resourceType: 'oncall_schedule', resourceId: id, workspaceId: before.workspace_id, changes });
    return r;
  });
  return scheduleOut(row, await people(db, row.participant_ids));
}

/**
 * Changes a policy's fields given. A confined caller sees only the steps
 * whose target it can see, so it may replace the steps only when it sees
 * them all: nothing it cannot see is dropped (403 `workspace_confined`
 * otherwise). Monitors named move out of any other policy, as on create.
 * The answer is the policy as getOnCall shows it to the caller.
 */
export async function updateEscalationPolicy(db: Db, caller: Caller, id: string, input: PolicyFields) {
  const [before] = (await visiblePolicies(db, caller, id)).rows;
  if (!before) throw notFound('escalation policy', 'id');
  if (input.steps !== undefined && isConfined(caller)) {
    const seen = await targetNames(db, caller, before.steps);
    if (before.steps.some((s) => !seen.has(targetKey(s)))) throw confinedRefusal(MANAGE, 'replace the steps of a policy that pages beyond its workspaces', 'steps');
  }
  const c = await checkPolicy(db, caller, input, 'leave an escalation policy naming no monitor (it would belong to the whole organisation)');
  await db.transaction().execute(async (tx) => {
    if (c.monitorIds) await takeMonitors(tx, caller, c.monitorIds, id);
    const locked = await tx.selectFrom('escalation_policies').selectAll().where('id', '=', id)
      .where('organization_id', '=', caller.organizationId).forUpdate().executeTakeFirst();
    if (!locked) throw notFound('escalation policy', 'id');
    const was = { name: locked.name, repeat: locked.repeat, steps: locked.steps, monitorIds: locked.monitor_ids };
    const now = { name: c.name ?? was.name, repeat: c.repeat ?? was.repeat, steps: c.steps ?? was.steps, monitorIds: c.monitorIds ?? was.monitorIds };
    const changes = diff(was, now, POLICY_AUDITED);
    if (Object.keys(changes).length === 0) return;
    await tx.updateTable('escalation_policies')
      .set({ name: now.name, repeat: now.repeat, steps: JSON.stringify(now.steps), monitor_ids: now.monitorIds })
      .where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'oncall.escalation_policy_updated', resourceType: 'escalation_policy', resourceId: id, changes });
  });
  const { rows, monitors } = await visiblePolicies(db, caller, id);
  const [after] = rows;
  if (!after) throw notFound('escalation policy', 'id');
  return policyOut(caller, after, await targetNames(db, caller, after.steps), monitors);
}
