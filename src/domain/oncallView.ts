import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { Caller } from '../auth/caller';
import { isConfined } from '../auth/confinement';
import type { Db } from '../db/connect';
import type { EscalationPoliciesTable, OncallOverridesTable, OncallSchedulesTable } from '../db/schema';
import { onCallAt } from '../alerting/oncall';
import { undeliverableKinds, type Providers } from '../alerting/channels/channel';
import { orgWideOrInWorkspaces } from '../repo/scope';

/*
 * On-call as one caller sees it (spec, Authentication §3: for a caller
 * confined to workspaces "anything outside does not exist"). docs/roles.md
 * says the same in words.
 *
 * - Schedules and channels: the caller's workspaces' and the
 *   organisation-wide ones (workspace_id null).
 * - Escalation policies have no workspace of their own; they are seen through
 *   the monitors they escalate. A confined caller sees a policy that names at
 *   least one monitor and whose every named monitor still exists in one of
 *   its workspaces. A deleted monitor's workspace is no longer known, so it
 *   counts as outside: deleting monitors can only narrow what a confined
 *   caller sees, never widen it. A policy naming no monitor belongs to the
 *   whole organisation.
 * - Steps: a confined caller sees only the steps whose target it can see now
 *   (a schedule or channel of its reach, a member); the others are left out of
 *   `steps`, so neither their id nor their name reaches it. An unconfined
 *   caller sees every step, `targetName` null for a target that is gone.
 * - People: colleagues (members) are seen by name whatever their workspaces.
 * - Reachability (`unreachable`) counts only the channels within the caller's
 *   reach, so that it says nothing of channels outside.
 */

export type ScheduleRow = Selectable<OncallSchedulesTable>;
export type PolicyRow = Selectable<EscalationPoliciesTable>;
type OverrideRow = Selectable<OncallOverridesTable>;
/** One escalation step as stored. */
export type Step = PolicyRow['steps'][number];
/** A person as on-call answers name them. */
export type Person = { userId: string; email: string; name: string | null };

/** A filter on `column` keeping rows of the caller's reach: organisation-wide or in its workspaces (everything when unconfined). */
export function inReach(caller: Caller, column = 'workspace_id'): Expression<SqlBool> {
  return orgWideOrInWorkspaces(caller.workspaceIds, sql.ref(column));
}

/** The schedules the caller sees: its workspaces' and the organisation-wide ones. */
export function visibleSchedules(db: Db, caller: Caller) {
  return db.selectFrom('oncall_schedules').selectAll().where('organization_id', '=', caller.organizationId).where(inReach(caller));
}

/** The users among `ids`, whatever their membership (people named by schedules and overrides). */
export async function people(db: Db, ids: Iterable<string>): Promise<Map<string, Person>> {
  const list = [...new Set(ids)];
  if (!list.length) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'email', 'name']).where('id', 'in', list).execute();
  return new Map(rows.map((u) => [u.id, { userId: u.id, email: u.email, name: u.name }]));
}

/** The members of the organisation among `ids`. */
async function members(db: Db, organizationId: string, ids: string[]): Promise<Map<string, Person>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('users as u').innerJoin('memberships as m', 'm.user_id', 'u.id').select(['u.id', 'u.email', 'u.name'])
    .where('m.organization_id', '=', organizationId).where('u.id', 'in', ids).execute();
  return new Map(rows.map((u) => [u.id, { userId: u.id, email: u.email, name: u.name }]));
}

/** True when the user is a member of the organisation. */
export async function isMember(db: Db, organizationId: string, userId: string): Promise<boolean> {
  return (await members(db, organizationId, [userId])).size > 0;
}

/** Enabled, confirmed channels owned by a person's membership of the organisation (`m.user_id` is the person). */
export function ownedChannels(db: Db, organizationId: string) {
  return db.selectFrom('notification_channels as c').innerJoin('memberships as m', 'm.id', 'c.owner_membership_id')
    .where('c.organization_id', '=', organizationId).where('m.organization_id', '=', organizationId)
    .where('c.enabled', '=', true).where('c.confirmed_at', 'is not', null);
}

/** The API shape of a schedule. */
export function scheduleOut(s: ScheduleRow, persons: Map<string, Person>) {
  return {
    id: s.id, name: s.name, timezone: s.timezone, shiftLengthHours: s.shift_length_hours, handoffTime: s.handoff_time,
    participants: s.participant_ids.map((id) => persons.get(id)).filter((p): p is Person => !!p), workspaceId: s.workspace_id,
  };
}

/** The API shape of an override. */
export function overrideOut(o: OverrideRow, persons: Map<string, Person>) {
  const user = persons.get(o.user_id) ?? { userId: o.user_id, email: '', name: null };
  return { id: o.id, scheduleId: o.schedule_id, user, startsAt: o.starts_at.toISOString(), endsAt: o.ends_at.toISOString() };
}

/** The key of a step's target in {@link targetNames}. */
export const targetKey = (s: Pick<Step, 'targetType' | 'targetId'>) => `${s.targetType}:${s.targetId}`;

/**
 * The names of the step targets the caller can see now, by {@link targetKey}:
 * schedules and channels of its reach, members (name, else e-mail). A target
 * absent from the map is gone or outside — the caller cannot tell which.
 */
export async function targetNames(db: Db, caller: Caller, steps: readonly Pick<Step, 'targetType' | 'targetId'>[]): Promise<Map<string, string>> {
  const ids = (t: Step['targetType']) => [...new Set(steps.filter((s) => s.targetType === t).map((s) => s.targetId))];
  const names = new Map<string, string>();
  const [sch, usr, chn] = [ids('schedule'), ids('user'), ids('channel')];
  if (sch.length) for (const s of await visibleSchedules(db, caller).where('id', 'in', sch).execute()) names.set(targetKey({ targetType: 'schedule', targetId: s.id }), s.name);
  for (const p of (await members(db, caller.organizationId, usr)).values()) names.set(targetKey({ targetType: 'user', targetId: p.userId }), p.name ?? p.email);
  if (chn.length) {
    const rows = await db.selectFrom('notification_channels').select(['id', 'name']).where('organization_id', '=', caller.organizationId)
      .where('id', 'in', chn).where(inReach(caller)).execute();
    for (const c of rows) names.set(targetKey({ targetType: 'channel', targetId: c.id }), c.name);
  }
  return names;
}

/** The workspace of each existing monitor among `ids`. */
async function monitorWorkspaces(db: Db, organizationId: string, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('monitors').select(['id', 'workspace_id']).where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  return new Map(rows.map((m) => [m.id, m.workspace_id]));
}

/** The visibility rule of policies (see the head of this file); `monitors` maps existing monitors to their workspace. */
function policyVisible(caller: Caller, p: PolicyRow, monitors: Map<string, string>): boolean {
  if (!isConfined(caller)) return true;
  const mine = new Set(caller.workspaceIds);
  return p.monitor_ids.length > 0 && p.monitor_ids.every((m) => mine.has(monitors.get(m) ?? ''));
}

/** The policies the caller sees (one, with `id`), oldest first, and the workspaces of the monitors they name. */
export async function visiblePolicies(db: Db, caller: Caller, id?: string) {
  let q = db.selectFrom('escalation_policies').selectAll().where('organization_id', '=', caller.organizationId);
  if (id !== undefined) q = q.where('id', '=', id);
  const rows = await q.orderBy('created_at').orderBy('id').execute();
  const monitors = await monitorWorkspaces(db, caller.organizationId, [...new Set(rows.flatMap((p) => p.monitor_ids))]);
  return { rows: rows.filter((p) => policyVisible(caller, p, monitors)), monitors };
}

/**
 * The API shape of a policy the caller sees: its steps through
 * {@link targetNames} (a confined caller gets only the steps it can see), the
 * monitors that still exist.
 */
export function policyOut(caller: Caller, p: PolicyRow, names: Map<string, string>, monitors: Pick<ReadonlySet<string>, 'has'>) {
  return {
    id: p.id, name: p.name, repeat: p.repeat,
    steps: p.steps.filter((s) => !isConfined(caller) || names.has(targetKey(s)))
      .map((s) => ({ afterMinutes: s.afterMinutes, targetType: s.targetType, targetId: s.targetId, targetName: names.get(targetKey(s)) ?? null })),
    monitorIds: p.monitor_ids.filter((id) => monitors.has(id)),
  };
}

/**
 * GET /on-call: the schedules, policies, current and future overrides the
 * caller sees, who is on call at `now`, and who cannot be reached (no enabled,
 * confirmed channel of the caller's reach of a kind this server can deliver:
 * see the setup checklist). Nothing outside the caller's reach is named.
 */
export async function getOnCall(db: Db, caller: Caller, now: Date, providers: Pick<Providers, 'smtpUrl' | 'telegramBotToken' | 'smsAccountSid'>) {
  const org = caller.organizationId;
  const scheduleRows = await visibleSchedules(db, caller).orderBy('created_at').orderBy('id').execute();
  const overrides = scheduleRows.length
    ? await db.selectFrom('oncall_overrides').selectAll().where('organization_id', '=', org).where('schedule_id', 'in', scheduleRows.map((s) => s.id))
      .where('ends_at', '>', now).orderBy('starts_at').orderBy('created_at').orderBy('id').execute()
    : [];
  const { rows, monitors } = await visiblePolicies(db, caller);
  const names = await targetNames(db, caller, rows.flatMap((p) => p.steps));
  const policies = rows.map((p) => policyOut(caller, p, names, monitors));
  const stepUsers = policies.flatMap((p) => p.steps.filter((s) => s.targetType === 'user').map((s) => s.targetId));
  const named = [...scheduleRows.flatMap((s) => s.participant_ids), ...stepUsers];
  const persons = await people(db, [...named, ...overrides.map((o) => o.user_id)]);
  const reachable = new Set(named.length
    ? (await ownedChannels(db, org).select('m.user_id').where('m.user_id', 'in', named).where('c.kind', 'not in', undeliverableKinds(providers))
      .where(inReach(caller, 'c.workspace_id')).execute()).map((r) => r.user_id)
    : []);
  const onCallNow = scheduleRows.map((s) => {
    const r = onCallAt(s, overrides.filter((o) => o.schedule_id === s.id), now);
    const user = r.userId ? persons.get(r.userId) ?? null : null;
    return { scheduleId: s.id, user, viaOverride: r.viaOverride, until: user && r.until ? r.until.toISOString() : null };
  });
  const unreachable = [...new Set(named)].filter((id) => !reachable.has(id)).map((id) => persons.get(id)).filter((p): p is Person => !!p);
  return {
    schedules: scheduleRows.map((s) => scheduleOut(s, persons)),
    escalationPolicies: policies,
    overrides: overrides.map((o) => overrideOut(o, persons)),
    onCallNow,
    unreachable,
  };
}
