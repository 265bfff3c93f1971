import { IANAZone } from 'luxon';
import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import type { EscalationPoliciesTable, OncallOverridesTable, OncallSchedulesTable } from '../db/schema';
import { newId } from '../crypto/ids';
import { ApiError, invalid, notFound } from '../pipeline/errors';
import { selectMonitors } from '../repo/monitors';
import { onCallAt } from '../alerting/oncall';
import { audit, diff } from './audit';
import { visibleWorkspace, workspaceFilter } from './tenancy';
import { undeliverableKinds, type Providers } from '../alerting/channels/channel';
import { orgWideOrInWorkspaces } from '../repo/scope';

/*
 * On-call schedules, escalation policies and overrides.
 *
 * Tenancy: schedules belong to a workspace or, with workspace_id null, to the
 * whole organisation. A key confined to workspaces sees the schedules of its
 * workspaces plus the organisation-wide ones, but may not create, delete or
 * cover (override) an organisation-wide schedule: 403 workspace_confined.
 * Escalation policies have no workspace: a confined key sees (and may delete)
 * a policy when every monitor it names is in its workspaces; step targets it
 * cannot see show `targetName: null`. People are resolved from the users
 * table; reachability goes through the person's membership of this
 * organisation (channels they own via owner_membership_id).
 */

type ScheduleRow = Selectable<OncallSchedulesTable>;
type PolicyRow = Selectable<EscalationPoliciesTable>;
type OverrideRow = Selectable<OncallOverridesTable>;
/** One escalation step as stored. */
export type Step = PolicyRow['steps'][number];
type Person = { userId: string; email: string; name: string | null };

const confined = (c: Caller) => c.workspaceIds !== null;

/** Rows (of a single-table query) whose workspace_id is null or one the caller sees. */
function wsFilter(caller: Caller): Expression<SqlBool> {
  return orgWideOrInWorkspaces(caller.workspaceIds, sql`workspace_id`);
}

function schedules(db: Db, caller: Caller) {
  return db.selectFrom('oncall_schedules').selectAll().where('organization_id', '=', caller.organizationId).where(wsFilter(caller));
}

/** A schedule the caller may change (or cover): visible, and not organisation-wide for a confined key. */
async function writableSchedule(db: Db, caller: Caller, id: string, field: string): Promise<ScheduleRow> {
  const row = await schedules(db, caller).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('schedule', field);
  if (row.workspace_id === null && confined(caller)) {
    throw new ApiError(403, 'workspace_confined', 'A key confined to workspaces cannot change an organisation-wide schedule.');
  }
  return row;
}

async function people(db: Db, ids: Iterable<string>): Promise<Map<string, Person>> {
  const list = [...new Set(ids)];
  if (!list.length) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'email', 'name']).where('id', 'in', list).execute();
  return new Map(rows.map((u) => [u.id, { userId: u.id, email: u.email, name: u.name }]));
}

async function isMember(db: Db, organizationId: string, userId: string): Promise<boolean> {
  return !!(await db.selectFrom('memberships').select('id').where('organization_id', '=', organizationId).where('user_id', '=', userId).executeTakeFirst());
}

/** Enabled, confirmed channels owned by the person's membership of the organisation. */
function ownedChannels(db: Db, organizationId: string) {
  return db.selectFrom('notification_channels as c').innerJoin('memberships as m', 'm.id', 'c.owner_membership_id')
    .where('c.organization_id', '=', organizationId).where('m.organization_id', '=', organizationId)
    .where('c.enabled', '=', true).where('c.confirmed_at', 'is not', null);
}

function scheduleOut(s: ScheduleRow, persons: Map<string, Person>) {
  return {
    id: s.id, name: s.name, timezone: s.timezone, shiftLengthHours: s.shift_length_hours, handoffTime: s.handoff_time,
    participants: s.participant_ids.map((id) => persons.get(id)).filter((p): p is Person => !!p), workspaceId: s.workspace_id,
  };
}

function overrideOut(o: OverrideRow, persons: Map<string, Person>) {
  const user = persons.get(o.user_id) ?? { userId: o.user_id, email: '', name: null };
  return { id: o.id, scheduleId: o.schedule_id, user, startsAt: o.starts_at.toISOString(), endsAt: o.ends_at.toISOString() };
}

/** Names of step targets the caller can see: schedules, people (name or e-mail), channels. */
async function targetNames(db: Db, caller: Caller, steps: readonly Step[]) {
  const ids = (t: Step['targetType']) => [...new Set(steps.filter((s) => s.targetType === t).map((s) => s.targetId))];
  const names = new Map<string, string>();
  const [sch, usr, chn] = [ids('schedule'), ids('user'), ids('channel')];
  if (sch.length) for (const s of await schedules(db, caller).where('id', 'in', sch).execute()) names.set(`schedule:${s.id}`, s.name);
  for (const p of (await people(db, usr)).values()) names.set(`user:${p.userId}`, p.name ?? p.email);
  if (chn.length) {
    const rows = await db.selectFrom('notification_channels').select(['id', 'name']).where('organization_id', '=', caller.organizationId)
      .where('id', 'in', chn).where(wsFilter(caller)).execute();
    for (const c of rows) names.set(`channel:${c.id}`, c.name);
  }
  return names;
}

/** Existing monitors named by policies, with their workspace. */
async function monitorWorkspaces(db: Db, organizationId: string, ids: string[]) {
  if (!ids.length) return new Map<string, string>();
  const rows = await db.selectFrom('monitors').select(['id', 'workspace_id']).where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  return new Map(rows.map((m) => [m.id, m.workspace_id]));
}

function policyOut(p: PolicyRow, names: Map<string, string>, monitors: Map<string, string>) {
  return {
    id: p.id, name: p.name, repeat: p.repeat,
    steps: p.steps.map((s) => ({ afterMinutes: s.afterMinutes, targetType: s.targetType, targetId: s.targetId, targetName: names.get(`${s.targetType}:${s.targetId}`) ?? null })),
    monitorIds: p.monitor_ids.filter((id) => monitors.has(id)),
  };
}

/** Policies the caller sees: all of them, or for a confined key those whose every existing monitor is in its workspaces. */
async function visiblePolicies(db: Db, caller: Caller, id?: string) {
  let q = db.selectFrom('escalation_policies').selectAll().where('organization_id', '=', caller.organizationId);
  if (id !== undefined) q = q.where('id', '=', id);
  const rows = await q.orderBy('created_at').orderBy('id').execute();
  const monitors = await monitorWorkspaces(db, caller.organizationId, [...new Set(rows.flatMap((p) => p.monitor_ids))]);
  const seen = (ws: string | undefined) => ws === undefined || !confined(caller) || caller.workspaceIds!.includes(ws);
  return { rows: rows.filter((p) => p.monitor_ids.every((m) => seen(monitors.get(m)))), monitors };
}

/**
 * GET /on-call: schedules, policies, current and future overrides, who is on
 * call at `now`, and who cannot be reached (no enabled, confirmed channel of a
 * kind this server can deliver: see the setup checklist).
 */
export async function getOnCall(db: Db, caller: Caller, now: Date, providers: Pick<Providers, 'smtpUrl' | 'telegramBotToken' | 'smsAccountSid'>) {
  const org = caller.organizationId;
  const scheduleRows = await schedules(db, caller).orderBy('created_at').orderBy('id').execute();
  const overrides = scheduleRows.length
    ? await db.selectFrom('oncall_overrides').selectAll().where('organization_id', '=', org).where('schedule_id', 'in', scheduleRows.map((s) => s.id))
      .where('ends_at', '>', now).orderBy('starts_at').orderBy('created_at').orderBy('id').execute()
    : [];
  const { rows: policies, monitors } = await visiblePolicies(db, caller);
  const names = await targetNames(db, caller, policies.flatMap((p) => p.steps));
  const stepUsers = policies.flatMap((p) => p.steps.filter((s) => s.targetType === 'user').map((s) => s.targetId));
  const named = [...scheduleRows.flatMap((s) => s.participant_ids), ...stepUsers];
  const persons = await people(db, [...named, ...overrides.map((o) => o.user_id)]);
  const reachable = new Set(named.length
    ? (await ownedChannels(db, org).select('m.user_id').where('m.user_id', 'in', named).where('c.kind', 'not in', undeliverableKinds(providers))
      .execute()).map((r) => r.user_id)
    : []);
  const onCallNow = scheduleRows.map((s) => {
    const r = onCallAt(s, overrides.filter((o) => o.schedule_id === s.id), now);
    const user = r.userId ? persons.get(r.userId) ?? null : null;
    return { scheduleId: s.id, user, viaOverride: r.viaOverride, until: user && r.until ? r.until.toISOString() : null };
  });
  const unreachable = [...new Set(named)].filter((id) => !reachable.has(id)).map((id) => persons.get(id)).filter((p): p is Person => !!p);
  return {
    schedules: scheduleRows.map((s) => scheduleOut(s, persons)),
    escalationPolicies: policies.map((p) => policyOut(p, names, monitors)),
    overrides: overrides.map((o) => overrideOut(o, persons)),
    onCallNow,
    unreachable,
  };
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
  else if (confined(caller)) throw new ApiError(403, 'workspace_confined', 'A key confined to workspaces cannot create an organisation-wide schedule; name a workspaceId.');
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

/** A step target exists in the organisation and is visible to the caller. */
async function targetExists(db: Db, caller: Caller, s: Step): Promise<boolean> {
  if (s.targetType === 'schedule') return !!(await schedules(db, caller).where('id', '=', s.targetId).executeTakeFirst());
  if (s.targetType === 'user') return isMember(db, caller.organizationId, s.targetId);
  return !!(await db.selectFrom('notification_channels').select('id').where('organization_id', '=', caller.organizationId)
    .where('id', '=', s.targetId).where(wsFilter(caller)).executeTakeFirst());
}

/**
 * Creates a policy. Steps must be in time order (afterMinutes never
 * decreasing: 400 naming steps.N.afterMinutes) and name existing targets (404
 * naming steps.N.targetId); monitors must be visible (404 naming
 * monitorIds.N) and move out of any other policy.
 */
export async function createEscalationPolicy(db: Db, caller: Caller, input: CreatePolicyInput) {
  const name = checkName(input.name);
  const repeat = input.repeat ?? 0;
  const steps: Step[] = input.steps.map((s) => ({ afterMinutes: s.afterMinutes, targetType: s.targetType, targetId: s.targetId }));
  for (const [i, s] of steps.entries()) {
    if (i > 0 && s.afterMinutes < steps[i - 1].afterMinutes) throw invalid(`steps.${i}.afterMinutes`, "must not be less than the previous step's");
    if (!(await targetExists(db, caller, s))) throw notFound(s.targetType === 'user' ? 'person' : s.targetType, `steps.${i}.targetId`);
  }
  const monitorIds = [...new Set(input.monitorIds ?? [])];
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
  return policyOut(row, await targetNames(db, caller, row.steps), new Map(monitorIds.map((m) => [m, ''])));
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

/** Removes a cover; the rotation applies again. */
export async function deleteOverride(db: Db, caller: Caller, id: string) {
  const o = await db.selectFrom('oncall_overrides').selectAll().where('organization_id', '=', caller.organizationId).where('id', '=', id).executeTakeFirst();
  if (!o) throw notFound('override', 'id');
  const s = await writableSchedule(db, caller, o.schedule_id, 'id');
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('oncall_overrides').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'oncall.override_deleted', resourceType: 'oncall_override', resourceId: id, workspaceId: s.workspace_id,
      changes: diff({ scheduleId: o.schedule_id, userId: o.user_id, startsAt: o.starts_at.toISOString(), endsAt: o.ends_at.toISOString() }, null, ['scheduleId', 'userId', 'startsAt', 'endsAt']) });
  });
  return { id, deleted: true as const };
}

/** For the escalation runner: the policy escalating `monitorId`'s incidents, or null. */
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
