import { IANAZone } from 'luxon';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Caller } from '../auth/caller';
import { confinedRefusal, isConfined, requireWholeOrganisation } from '../auth/confinement';
import type { Permission } from '../auth/roles';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { invalid, notFound } from '../pipeline/errors';
import { audit, diff } from './audit';
import { visibleWorkspace, workspaceFilter } from './tenancy';
import {
  inReach, isMember, overrideOut, people, policyOut, scheduleOut, targetKey, targetNames, visiblePolicies, visibleSchedules,
  type ScheduleRow, type Step,
} from './oncallView';

export { getOnCall } from './oncallView';
export type { Step } from './oncallView';

/*
 * On-call schedules, escalation policies and overrides: the writes. What a
 * caller sees (and so may name or delete) is decided in ./oncallView.ts; what
 * the escalation runner asks in ./oncallRunner.ts.
 *
 * Tenancy: schedules belong to a workspace or, with workspace_id null, to the
 * whole organisation. A caller confined to workspaces may not create, delete
 * or cover (override) an organisation-wide schedule, nor create a policy
 * naming no monitor (it belongs to no workspace): 403 `workspace_confined`
 * naming the operation's permission. Anything outside its reach — or gone —
 * answers the same 404 as a made-up id: for a delete, `No such <thing>.`
 * naming `id`, whatever it is that lies outside.
 */

/** The `x-permission` of every on-call write in openapi.yaml (on-call decides who gets alerted): what a confined refusal names. */
export const MANAGE: Permission = 'notification_channel:manage';

/** A schedule the caller may change (or cover): one it sees (else 404 naming `field`), and not organisation-wide for a confined caller. */
export async function writableSchedule(db: Db, caller: Caller, id: string, field: string): Promise<ScheduleRow> {
  const row = await visibleSchedules(db, caller).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('schedule', field);
  if (row.workspace_id === null && isConfined(caller)) throw confinedRefusal(MANAGE, 'change or cover an organisation-wide schedule');
  return row;
}

export interface CreateScheduleInput {
  name: string; timezone?: string; shiftLengthHours: number; handoffTime: string; participantIds: string[]; workspaceId?: string | null;
}

/** The fields of a schedule an update may change (UpdateScheduleBody). */
export type ScheduleFields = Partial<Omit<CreateScheduleInput, 'workspaceId'>>;

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1 to 100 characters');
  return name;
}

/**
 * createSchedule's checks of the fields present that need no lookup, as
 * columns (the update runs the same ones). shiftLengthHours (1..720) and
 * participantIds (1..100) are held by the contract's validator.
 */
export function scheduleColumns(input: ScheduleFields): Partial<Pick<ScheduleRow, 'name' | 'timezone' | 'shift_length_hours' | 'handoff_time'>> {
  const out: Partial<Pick<ScheduleRow, 'name' | 'timezone' | 'shift_length_hours' | 'handoff_time'>> = {};
  if (input.name !== undefined) out.name = checkName(input.name);
  if (input.timezone !== undefined) {
    if (!IANAZone.isValidZone(input.timezone)) throw invalid('timezone', 'must be an IANA time zone such as Europe/Berlin');
    out.timezone = input.timezone;
  }
  if (input.handoffTime !== undefined) {
    if (!/^([01][0-9]|2[0-3]):[0-5][0-9]$/.test(input.handoffTime)) throw invalid('handoffTime', 'must be HH:MM');
    out.handoff_time = input.handoffTime;
  }
  if (input.shiftLengthHours !== undefined) out.shift_length_hours = input.shiftLengthHours;
  return out;
}

/** Participants must be members of the organisation: 404 naming participantIds.N otherwise. */
export async function checkParticipants(db: Db, caller: Caller, ids: readonly string[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    if (!(await isMember(db, caller.organizationId, id))) throw notFound('person', `participantIds.${i}`);
  }
}

/** The schedule fields the audit log records. */
export const SCHEDULE_AUDITED = ['name', 'timezone', 'shiftLengthHours', 'handoffTime', 'participantIds', 'workspaceId'];

/** A schedule row as the audit log records it. */
export const scheduleAudited = (r: ScheduleRow) => ({
  name: r.name, timezone: r.timezone, shiftLengthHours: r.shift_length_hours, handoffTime: r.handoff_time, participantIds: r.participant_ids, workspaceId: r.workspace_id,
});

/** Creates a schedule; participants must be members (404 naming participantIds.N), the zone a valid IANA zone (default UTC). */
export async function createSchedule(db: Db, caller: Caller, input: CreateScheduleInput) {
  const c = scheduleColumns({ timezone: 'UTC', ...input });
  let workspaceId: string | null = null;
  if (input.workspaceId != null) workspaceId = (await visibleWorkspace(db, caller, input.workspaceId)).id;
  else requireWholeOrganisation(caller, MANAGE, 'create an organisation-wide schedule (name a workspaceId)');
  await checkParticipants(db, caller, input.participantIds);
  const row = await db.transaction().execute(async (tx) => {
    const r = await tx.insertInto('oncall_schedules').values({
      id: newId('sch'), organization_id: caller.organizationId, workspace_id: workspaceId, name: c.name!, timezone: c.timezone!,
      shift_length_hours: c.shift_length_hours!, handoff_time: c.handoff_time!, participant_ids: input.participantIds,
    }).returningAll().executeTakeFirstOrThrow();
    await audit(tx, caller, { action: 'oncall.schedule_created', resourceType: 'oncall_schedule', resourceId: r.id, workspaceId,
      changes: diff(null, scheduleAudited(r), SCHEDULE_AUDITED) });
    return r;
  });
  return scheduleOut(row, await people(db, row.participant_ids));
}

/** Deletes a schedule and (by cascade) its overrides; steps naming it page nobody from then on. */
export async function deleteSchedule(db: Db, caller: Caller, id: string) {
  const s = await writableSchedule(db, caller, id, 'id');
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('oncall_schedules').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'oncall.schedule_deleted', resourceType: 'oncall_schedule', resourceId: id, workspaceId: s.workspace_id,
      changes: diff({ name: s.name, participantIds: s.participant_ids }, null, ['name', 'participantIds']) });
  });
  return { id, deleted: true as const };
}

export interface CreatePolicyInput { name: string; repeat?: number; steps: Step[]; monitorIds?: string[] }

/** The fields of a policy an update may change (UpdateEscalationPolicyBody; monitorIds null clears). */
export type PolicyFields = Partial<Omit<CreatePolicyInput, 'monitorIds'>> & { monitorIds?: string[] | null };

/** What {@link checkPolicy} found: the fields present, checked, and the names of the targets the caller sees. */
export interface CheckedPolicy { name?: string; repeat?: number; steps?: Step[]; monitorIds?: string[]; names: Map<string, string> }

/**
 * createEscalationPolicy's checks of the fields present (the update runs the
 * same ones). Steps must be in time order (afterMinutes never decreasing:
 * 400 naming steps.N.afterMinutes) and name targets the caller sees (404
 * naming steps.N.targetId, the same for one outside its reach as for a
 * made-up id); monitors must be visible (404 naming monitorIds.N). A
 * confined caller may not leave a policy naming no monitor (403
 * `workspace_confined`): it would belong to no workspace, and it could not
 * see it afterwards (oncallView's visibility rule) — decided on the body
 * alone, before any lookup, so the answer says nothing of what exists.
 */
export async function checkPolicy(db: Db, caller: Caller, input: PolicyFields, what: string): Promise<CheckedPolicy> {
  const out: CheckedPolicy = { names: new Map() };
  if (input.name !== undefined) out.name = checkName(input.name);
  if (input.repeat !== undefined) out.repeat = input.repeat;
  const steps = input.steps?.map((s): Step => ({ afterMinutes: s.afterMinutes, targetType: s.targetType, targetId: s.targetId }));
  const monitorIds = input.monitorIds === undefined ? undefined : [...new Set(input.monitorIds ?? [])];
  if (monitorIds && !monitorIds.length) requireWholeOrganisation(caller, MANAGE, what);
  if (steps) {
    out.names = await targetNames(db, caller, steps);
    for (const [i, s] of steps.entries()) {
      if (i > 0 && s.afterMinutes < steps[i - 1].afterMinutes) throw invalid(`steps.${i}.afterMinutes`, "must not be less than the previous step's");
      // Outside the caller's reach and made up answer alike.
      if (!out.names.has(targetKey(s))) throw notFound(s.targetType === 'user' ? 'person' : s.targetType, `steps.${i}.targetId`);
    }
    out.steps = steps;
  }
  if (monitorIds?.length) {
    let q = db.selectFrom('monitors').select('id').where('organization_id', '=', caller.organizationId)
      .where(sql<SqlBool>`id = any(${sql.val(monitorIds)}::text[])` as Expression<SqlBool>);
    const ws = workspaceFilter(caller.workspaceIds);
    if (ws) q = q.where('workspace_id', 'in', ws);
    const visible = new Set((await q.execute()).map((m) => m.id));
    const missing = (input.monitorIds ?? []).findIndex((id) => !visible.has(id));
    if (missing >= 0) throw notFound('monitor', `monitorIds.${missing}`);
  }
  if (monitorIds) out.monitorIds = monitorIds;
  return out;
}

/**
 * Takes `monitorIds` out of every other policy of the organisation (a
 * monitor belongs to at most one), with an audit entry for each policy
 * changed. Call it in the writing transaction: it serialises policy writes
 * per organisation first.
 */
export async function takeMonitors(tx: Db, caller: Caller, monitorIds: readonly string[], policyId: string): Promise<void> {
  await tx.selectFrom('organizations').select('id').where('id', '=', caller.organizationId).forUpdate().execute();
  if (!monitorIds.length) return;
  const others = await tx.selectFrom('escalation_policies').select(['id', 'monitor_ids']).where('organization_id', '=', caller.organizationId)
    .where('id', '<>', policyId).where(sql<SqlBool>`monitor_ids && ${sql.val([...monitorIds])}::text[]` as Expression<SqlBool>).execute();
  for (const o of others) {
    const kept = o.monitor_ids.filter((m) => !monitorIds.includes(m));
    await tx.updateTable('escalation_policies').set({ monitor_ids: kept }).where('id', '=', o.id).execute();
    await audit(tx, caller, { action: 'oncall.escalation_policy_updated', resourceType: 'escalation_policy', resourceId: o.id,
      changes: diff({ monitorIds: o.monitor_ids }, { monitorIds: kept }, ['monitorIds']) });
  }
}

/** The policy fields the audit log records. */
export const POLICY_AUDITED = ['name', 'repeat', 'steps', 'monitorIds'];

/** Creates a policy: checked by {@link checkPolicy}; its monitors move out of any other policy. */
export async function createEscalationPolicy(db: Db, caller: Caller, input: CreatePolicyInput) {
  const c = await checkPolicy(db, caller, { repeat: 0, monitorIds: [], ...input },
    'create an escalation policy naming no monitor (name monitors of its workspaces)');
  const [name, repeat, steps, monitorIds] = [c.name!, c.repeat!, c.steps!, c.monitorIds!];
  const id = newId('esc');
  const row = await db.transaction().execute(async (tx) => {
    await takeMonitors(tx, caller, monitorIds, id);
    const r = await tx.insertInto('escalation_policies').values({
      id, organization_id: caller.organizationId, name, repeat, steps: JSON.stringify(steps), monitor_ids: monitorIds,
    }).returningAll().executeTakeFirstOrThrow();
    await audit(tx, caller, { action: 'oncall.escalation_policy_created', resourceType: 'escalation_policy', resourceId: id,
      changes: diff(null, { name, repeat, steps, monitorIds }, POLICY_AUDITED) });
    return r;
  });
  return policyOut(caller, row, c.names, new Set(monitorIds));
}

/** Deletes a policy; incidents it was escalating stop (the runner finds no policy). */
export async function deleteEscalationPolicy(db: Db, caller: Caller, id: string) {
  const [p] = (await visiblePolicies(db, caller, id)).rows;
  if (!p) throw notFound('escalation policy', 'id');
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('escalation_policies').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'oncall.escalation_policy_deleted', resourceType: 'escalation_policy', resourceId: id,
      changes: diff({ name: p.name, monitorIds: p.monitor_ids }, null, ['name', 'monitorIds']) });
  });
  return { id, deleted: true as const };
}

export interface CreateOverrideInput { scheduleId: string; userId: string; startsAt: string; endsAt: string }

/** Creates a cover: the schedule must be changeable by the caller, the person a member, endsAt after startsAt. */
export async function createOverride(db: Db, caller: Caller, input: CreateOverrideInput) {
  const s = await writableSchedule(db, caller, input.scheduleId, 'scheduleId');
  if (!(await isMember(db, caller.organizationId, input.userId))) throw notFound('person', 'userId');
  const startsAt = new Date(input.startsAt);
  const endsAt = new Date(input.endsAt);
  if (Number.isNaN(startsAt.getTime())) throw invalid('startsAt', 'must be an RFC 3339 timestamp');
  if (Number.isNaN(endsAt.getTime())) throw invalid('endsAt', 'must be an RFC 3339 timestamp');
  if (endsAt <= startsAt) throw invalid('endsAt', 'must be after startsAt');
  const row = await db.transaction().execute(async (tx) => {
    const r = await tx.insertInto('oncall_overrides').values({
      id: newId('ovr'), organization_id: caller.organizationId, schedule_id: s.id, user_id: input.userId, starts_at: startsAt, ends_at: endsAt,
    }).returningAll().executeTakeFirstOrThrow();
    await audit(tx, caller, { action: 'oncall.override_created', resourceType: 'oncall_override', resourceId: r.id, workspaceId: s.workspace_id,
      changes: diff(null, { scheduleId: s.id, userId: input.userId, startsAt: startsAt.toISOString(), endsAt: endsAt.toISOString() }, ['scheduleId', 'userId', 'startsAt', 'endsAt']) });
    return r;
  });
  return overrideOut(row, await people(db, [row.user_id]));
}

/**
 * Removes a cover; the rotation applies again. A cover of a schedule the
 * caller does not see answers `No such override.` like a made-up id.
 */
export async function deleteOverride(db: Db, caller: Caller, id: string) {
  const o = await db.selectFrom('oncall_overrides as o').innerJoin('oncall_schedules as s', 's.id', 'o.schedule_id').selectAll('o').select('s.workspace_id')
    .where('o.organization_id', '=', caller.organizationId).where('o.id', '=', id).where(inReach(caller, 's.workspace_id')).executeTakeFirst();
  if (!o) throw notFound('override', 'id');
  if (o.workspace_id === null) requireWholeOrganisation(caller, MANAGE, 'change or cover an organisation-wide schedule');
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('oncall_overrides').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'oncall.override_deleted', resourceType: 'oncall_override', resourceId: id, workspaceId: o.workspace_id,
      changes: diff({ scheduleId: o.schedule_id, userId: o.user_id, startsAt: o.starts_at.toISOString(), endsAt: o.ends_at.toISOString() }, null, ['scheduleId', 'userId', 'startsAt', 'endsAt']) });
  });
  return { id, deleted: true as const };
}
