/**
 * Members and invitations of an organisation (GET/POST /members, PATCH and
 * DELETE /members/{id}, DELETE /invitations/{id}).
 *
 * Roles rank owner > admin > member > viewer. Nobody grants a role above
 * their own or changes someone ranked above them; the last owner can be
 * neither demoted nor removed. A key carries its creator's role as it is now
 * (src/auth/authenticate.ts reads the membership on every resolution), so a
 * demotion narrows the member's keys from the next request.
 */
import type { Caller } from '../auth/caller';
import { forgetCallers } from '../auth/authenticate';
import { missingRecord, reachShown, reachVisibleSql, requireChangeable, requireGrantable } from '../auth/confinement';
import { isRole, type Permission, type Role } from '../auth/roles';
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { audit } from '../domain/audit';
import { iso } from '../domain/tenancy';
import { ApiError, conflict, invalid, limitReached, notFound } from '../pipeline/errors';

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
/** Channel kinds that reach the person themselves: deleted with their membership. Others are the team's and stay. */
export const PERSONAL_CHANNEL_KINDS = ['email', 'sms'];

export function rankOf(role: string): number {
  return isRole(role) ? RANK[role] : -1;
}

/** 403 naming `permission` when `caller` would hand out (or touch someone holding) a role above their own. */
export function mayHandle(caller: Caller, role: string, what: string, permission: Permission): void {
  if (rankOf(role) > rankOf(caller.role)) {
    throw new ApiError(403, 'role_above_own', `Your role (${caller.role}) holds ${permission} only up to its own rank: it cannot ${what} a role above it (${role}).`,
      { role, permission }, [{ field: 'role', reason: 'above your own role' }]);
  }
}

/** Workspaces an invitation or member is confined to: checked against the organisation and the caller's own confinement. */
export async function confinement(db: Db, caller: Caller, ids: readonly string[] | undefined): Promise<string[] | null> {
  const wanted = [...new Set(ids ?? [])];
  if (wanted.length === 0) {
    // A confined caller cannot hand out the whole organisation.
    if (caller.workspaceIds !== null) throw invalid('workspaceIds', 'name at least one of your own workspaces (you are confined to some)');
    return null;
  }
  const found = await db.selectFrom('workspaces').select('id').where('organization_id', '=', caller.organizationId).where('id', 'in', wanted).execute();
  const known = new Set(found.map((w) => w.id));
  const missing = wanted.find((w) => !known.has(w) || (caller.workspaceIds !== null && !caller.workspaceIds.includes(w)));
  if (missing) throw new ApiError(404, 'not_found', `No workspace ${missing}.`, {}, [{ field: 'workspaceIds', reason: `no workspace ${missing}` }]);
  return wanted;
}

/** The member cap of the plan, counting pending invitations (they become members). */
export async function checkMemberCap(db: Db, caller: Caller): Promise<void> {
  const cap = caller.plan.member_cap;
  if (cap === null) return;
  const [m, i] = await Promise.all([
    db.selectFrom('memberships').select((eb) => eb.fn.countAll<string>().as('n')).where('organization_id', '=', caller.organizationId).executeTakeFirstOrThrow(),
    db.selectFrom('invitations').select((eb) => eb.fn.countAll<string>().as('n')).where('organization_id', '=', caller.organizationId).where('expires_at', '>', new Date()).executeTakeFirstOrThrow(),
  ]);
  const current = Number(m.n) + Number(i.n);
  if (current >= cap) throw limitReached(caller.plan.code, 'members', cap, current);
}

/**
 * GET /members: the members, and the pending invitations, as the caller may
 * see them (src/auth/confinement.ts): for a confined caller only those
 * reaching one of its workspaces, with their workspaces narrowed to its own.
 */
export async function listMembers(db: Db, caller: Caller) {
  const [members, invitations] = await Promise.all([
    db.selectFrom('memberships as ms').innerJoin('users as u', 'u.id', 'ms.user_id')
      .select((eb) => ['ms.id', 'ms.user_id', 'u.email', 'u.name', 'ms.role', 'ms.workspace_ids', 'ms.created_at',
        eb.selectFrom('api_keys as k').select((k) => k.fn.max('k.last_used_at').as('m')).whereRef('k.membership_id', '=', 'ms.id').as('last_seen_at')])
      .where('ms.organization_id', '=', caller.organizationId).where(reachVisibleSql(caller, sql`ms.workspace_ids`))
      .orderBy('ms.created_at').orderBy('ms.id').execute(),
    db.selectFrom('invitations as i').leftJoin('memberships as ms', 'ms.id', 'i.invited_by_membership_id').leftJoin('users as u', 'u.id', 'ms.user_id')
      .select(['i.id', 'i.email', 'i.role', 'i.workspace_ids', 'i.created_at', 'i.expires_at', 'u.name as by_name', 'u.email as by_email'])
      .where('i.organization_id', '=', caller.organizationId).where('i.expires_at', '>', new Date())
      .where(reachVisibleSql(caller, sql`i.workspace_ids`)).orderBy('i.created_at').execute(),
  ]);
  return {
    members: members.map((m) => ({
      id: m.id, userId: m.user_id, email: m.email, name: m.name, role: m.role, workspaceIds: reachShown(caller, m.workspace_ids),
      createdAt: iso(m.created_at)!, lastSeenAt: iso(m.last_seen_at as Date | null),
    })),
    invitations: invitations.map((i) => invitationOut({ ...i, workspace_ids: reachShown(caller, i.workspace_ids) })),
  };
}

export function invitationOut(i: { id: string; email: string; role: string; workspace_ids: string[] | null; created_at: Date; expires_at: Date; by_name?: string | null; by_email?: string | null }) {
  return {
    id: i.id, email: i.email, role: i.role, workspaceIds: i.workspace_ids, invitedBy: i.by_name ?? i.by_email ?? null,
    createdAt: iso(i.created_at)!, expiresAt: iso(i.expires_at)!,
  };
}

/** The member `id` as the caller may change it with `permission` (404 outside its view, 403 beyond its reach). */
async function membershipOf(db: Db, caller: Caller, id: string, permission: 'member:update_role' | 'member:remove', what: string) {
  const m = await db.selectFrom('memberships as ms').innerJoin('users as u', 'u.id', 'ms.user_id')
    .select(['ms.id', 'ms.role', 'ms.user_id', 'ms.workspace_ids', 'u.email']).where('ms.id', '=', id).where('ms.organization_id', '=', caller.organizationId)
    .forUpdate('ms').executeTakeFirst();
  if (!m) throw notFound('member', 'id');
  requireChangeable(caller, { reach: m.workspace_ids, role: m.role }, permission, what, missingRecord('member'));
  return m;
}

/** 409 `last_owner` when `membershipId` is the organisation's only owner. */
async function refuseLastOwner(db: Db, organizationId: string, membershipId: string, what: string): Promise<void> {
  const owners = await db.selectFrom('memberships').select('id').where('organization_id', '=', organizationId).where('role', '=', 'owner').forUpdate().execute();
  if (owners.length === 1 && owners[0].id === membershipId) throw conflict('last_owner', `The last owner cannot be ${what}: make another member an owner first.`, {}, 'id');
}

/** PATCH /members/{id}: a new role. */
export async function updateMember(db: Db, caller: Caller, id: string, body: { role: string }) {
  mayHandle(caller, body.role, 'grant', 'member:update_role');
  await db.transaction().execute(async (tx) => {
    const m = await membershipOf(tx, caller, id, 'member:update_role', 'change the role of a member');
    requireGrantable(caller, body.role, 'member:update_role');
    mayHandle(caller, m.role, 'change a member holding', 'member:update_role');
    if (m.role === body.role) return;
    if (m.role === 'owner') await refuseLastOwner(tx, caller.organizationId, id, 'demoted');
    await tx.updateTable('memberships').set({ role: body.role }).where('id', '=', id).execute();
    await audit(tx, caller, { action: 'member.role_changed', resourceType: 'member', resourceId: id, changes: { role: { from: m.role, to: body.role } } });
  });
  // The member's keys carry the new role from the next request, in every process within the key cache's 2 s.
  forgetCallers();
  return { ok: true as const };
}

/** DELETE /members/{id}: the membership, its API keys and personal channels, in one transaction. */
export async function removeMember(db: Db, caller: Caller, id: string) {
  await db.transaction().execute(async (tx) => {
    const m = await membershipOf(tx, caller, id, 'member:remove', 'remove a member');
    mayHandle(caller, m.role, 'remove a member holding', 'member:remove');
    if (m.role === 'owner') await refuseLastOwner(tx, caller.organizationId, id, 'removed');
    // Shared channels stay with the team (their owner becomes nobody); personal ones go with the person.
    const shared = await tx.updateTable('notification_channels').set({ owner_membership_id: null })
      .where('owner_membership_id', '=', id).where('kind', 'not in', PERSONAL_CHANNEL_KINDS).returning('id').execute();
    const personal = await tx.deleteFrom('notification_channels').where('owner_membership_id', '=', id).returning('id').execute();
    const keys = await tx.deleteFrom('api_keys').where('membership_id', '=', id).returning('id').execute();
    await tx.deleteFrom('memberships').where('id', '=', id).execute();
    await audit(tx, caller, {
      action: 'member.removed', resourceType: 'member', resourceId: id,
      changes: {
        member: { from: { email: m.email, role: m.role }, to: null },
        apiKeysRevoked: { from: null, to: keys.length }, personalChannelsDeleted: { from: null, to: personal.length },
        sharedChannelsKept: { from: null, to: shared.length },
      },
    });
  });
  forgetCallers();
  return { id, deleted: true as const };
}

/** DELETE /invitations/{id}: the link stops working. */
export async function withdrawInvitation(db: Db, caller: Caller, id: string) {
  await db.transaction().execute(async (tx) => {
    const inv = await tx.selectFrom('invitations').select(['email', 'role', 'workspace_ids']).where('id', '=', id)
      .where('organization_id', '=', caller.organizationId).forUpdate().executeTakeFirst();
    if (!inv) throw notFound('invitation', 'id');
    requireChangeable(caller, { reach: inv.workspace_ids, role: inv.role }, 'member:invite', 'withdraw an invitation', missingRecord('invitation'));
    await tx.deleteFrom('invitations').where('id', '=', id).execute();
    await audit(tx, caller, { action: 'invitation.withdrawn', resourceType: 'invitation', resourceId: id,
      changes: { invitation: { from: { email: inv.email, role: inv.role }, to: null } } });
  });
  return { id, deleted: true as const };
}
