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
const MANAGE: Permission = 'notification_channel:manage';

/** A schedule the caller may change (or cover): one it sees (else 404 naming `field`), and not organisation-wide for a confined caller. */
async function writableSchedule(db: Db, caller: Caller, id: string, field: string): Promise<ScheduleRow> {
  const row = await visibleSchedules(db, caller).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('schedule', field);
  if (row.workspace_id === null && isConfined(caller)) throw confinedRefusal(MANAGE, 'change or cover an organisation-wide schedule');
  return row;
}

export interface CreateScheduleInput {
  name: string; timezone?: string; shiftLengthHours: number; handoffTime: string; participantIds: string[]; workspaceId?: string | null;
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1 to 100 characters');
  return name;
}

/** Creates a schedule; participants must be members (404 naming participantIds.N), the zone a valid IANA zone (default UTC). */
export async function createSchedule(db: Db, caller: Caller, input: CreateScheduleInput) {
  const name = checkName(input.name);
  const timezone = input.timezone ?? 'UTC';
  if (!IANAZone.isValidZone(timezone)) throw invalid('timezone', 'must be an IANA time zone such as Europe/Berlin');
  if (!/^([01][0-9]|2[0-3]):[0-5][0-9]$/.test(input.handoffTime)) throw invalid('handoffTime', 'must be HH:MM');
  // shiftLengthHours (1..720) and participantIds (1..100) are held by the contract's validator.
  let workspaceId: string | null = null;
  if (input.workspaceId != null) workspaceId = (await visibleWorkspace(db, caller, input.workspaceId)).id;
  else requireWholeOrganisation(caller, MANAGE, 'create an organisation-wide schedule (name a workspaceId)');
  for (const [i, id] of input.participantIds.entries()) {
    if (!(await isMember(db, caller.organizationId, id))) throw notFound('person', `participantIds.${i}`);
  }
  const row = await db.transaction().execute(async (tx) => {
    const r = await tx.insertInto('oncall_schedules').values({
      id: newId('sch'), organization_id: caller.organizationId, workspace_id: workspaceId, name, timezone,
      shift_length_hours: input.shiftLengthHours, handoff_time: input.handoffTime, participant_ids: input.participantIds,
    }).returningAll().executeTakeFirstOrThrow();
    await audit(tx, caller, { action: 'oncall.schedule_created', resourceType: 'oncall_schedule', resourceId: r.id, workspaceId,
      changes: diff(null, { name, timezone, shiftLengthHours: r.shift_length_hours, handoffTime: r.handoff_time, participantIds: r.participant_ids, workspaceId },
        ['name', 'timezone', 'shiftLengthHours', 'handoffTime', 'participantIds', 'workspaceId']) });
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

/**
 * Creates a policy. Steps must be in time order (afterMinutes never
 * decreasing: 400 naming steps.N.afterMinutes) and name targets the caller
 * sees (404 naming steps.N.targetId, the same for one outside its reach as for
 * a made-up id); monitors must be visible (404 naming monitorIds.N) and move
 * out of any other policy. A confined caller must name at least one monitor
 * (403 `workspace_confined`): a policy naming none belongs to no workspace,
 * and it could not see it afterwards (oncallView's visibility rule).
 */
export async function createEscalationPolicy(db: Db, caller: Caller, input: CreatePolicyInput) {
  const name = checkName(input.name);
  const repeat = input.repeat ?? 0;
  const steps: Step[] = input.steps.map((s) => ({ afterMinutes: s.afterMinutes, targetType: s.targetType, targetId: s.targetId }));
  const monitorIds = [...new Set(input.monitorIds ?? [])];
  // Decided on the body alone, before any lookup: the answer says nothing of what exists.
  if (!monitorIds.length) requireWholeOrganisation(caller, MANAGE, 'create an escalation policy naming no monitor (name monitors of its workspaces)');
  const names = await targetNames(db, caller, steps);
  for (const [i, s] of steps.entries()) {
    if (i > 0 && s.afterMinutes < steps[i - 1].afterMinutes) throw invalid(`steps.${i}.afterMinutes`, "must not be less than the previous step's");
    // Outside the caller's reach and made up answer alike.
    if (!names.has(targetKey(s))) throw notFound(s.targetType === 'user' ? 'person' : s.targetType, `steps.${i}.targetId`);
  }
  if (monitorIds.length) {
    let q = db.selectFrom('monitors').select('id').where('organization_id', '=', caller.organizationId)
      .where(sql<SqlBool>`id = any(${sql.val(monitorIds)}::text[])` as Expression<SqlBool>);
    const ws = workspaceFilter(caller.workspaceIds);
    if (ws) q = q.where('workspace_id', 'in', ws);
    const visible = new Set((await q.execute()).map((m) => m.id));
    const missing = (input.monitorIds ?? []).findIndex((id) => !visible.has(id));
    if (missing >= 0) throw notFound('monitor', `monitorIds.${missing}`);
  }
  const id = newId('esc');
  const row = await db.transaction().execute(async (tx) => {
    // Serialise policy writes per organisation: a monitor stays in at most one policy.
    await tx.selectFrom('organizations').select('id').where('id', '=', caller.organizationId).forUpdate().execute();
    if (monitorIds.length) {
      const others = await tx.selectFrom('escalation_policies').select(['id', 'monitor_ids']).where('organization_id', '=', caller.organizationId)
        .where(sql<SqlBool>`monitor_ids && ${sql.val(monitorIds)}::text[]` as Expression<SqlBool>).execute();
      for (const o of others) {
        const kept = o.monitor_ids.filter((m) => !monitorIds.includes(m));
        await tx.updateTable('escalation_policies').set({ monitor_ids: kept }).where('id', '=', o.id).execute();
        await audit(tx, caller, { action: 'oncall.escalation_policy_updated', resourceType: 'escalation_policy', resourceId: o.id,
          changes: diff({ monitorIds: o.monitor_ids }, { monitorIds: kept }, ['monitorIds']) });
      }
    }
    const r = await tx.insertInto('escalation_policies').values({
      id, organization_id: caller.organizationId, name, repeat, steps: JSON.stringify(steps), monitor_ids: monitorIds,
    }).returningAll().executeTakeFirstOrThrow();
    await audit(tx, caller, { action: 'oncall.escalation_policy_created', resourceType: 'escalation_policy', resourceId: id,
      changes: diff(null, { name, repeat, steps, monitorIds }, ['name', 'repeat', 'steps', 'monitorIds']) });
    return r;
  });
  return policyOut(caller, row, names, new Set(monitorIds));
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
