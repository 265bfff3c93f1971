/**
 * Workspace confinement (spec, Authentication §3: "anything outside does not
 * exist for the key") beyond the row filters of each area: what an
 * organisation-wide change needs, and the one rule for people, invitations
 * and keys seen and changed through a confined caller. docs/roles.md says
 * the same in words; GET /members, GET /api-keys, their changes, search and
 * export all go through here.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Caller } from './caller';
import type { Permission, Role } from './roles';
import { ApiError, notFound } from '../pipeline/errors';

/** True when the caller is confined to some workspaces (a key's or a membership's confinement). */
export function isConfined(caller: Caller): boolean {
  return caller.workspaceIds !== null;
}

/**
 * 403 `workspace_confined` naming `permission` (spec rule 7: a 403 names the
 * permission): the caller holds it only within its workspaces, and `what`
 * reaches beyond them.
 */
export function confinedRefusal(permission: Permission, what: string, field?: string): ApiError {
  return new ApiError(403, 'workspace_confined',
    `Confined to workspaces, this caller holds ${permission} only within them and cannot ${what}: that reaches beyond its workspaces.`,
    { permission }, field ? [{ field, reason: 'reaches beyond your workspaces' }] : []);
}

/** Throws {@link confinedRefusal} when the caller is confined: `what` concerns the whole organisation. */
export function requireWholeOrganisation(caller: Caller, permission: Permission, what: string, field?: string): void {
  if (isConfined(caller)) throw confinedRefusal(permission, what, field);
}

/**
 * The workspaces a person, an invitation or a key acts in; null: the whole
 * organisation.
 */
export type Reach = readonly string[] | null;

/** Whose view a reach is seen through: a caller, or an export's scope. */
export type View = Pick<Caller, 'workspaceIds'>;

/** A key's reach: its own workspaces within its creator's membership confinement. */
export function keyReach(key: Reach, membership: Reach): Reach {
  if (key === null) return membership;
  if (membership === null) return key;
  return key.filter((w) => membership.includes(w));
}

/** Whether a record of `reach` exists for the caller: it reaches at least one of the caller's workspaces. */
export function reachVisible(caller: View, reach: Reach): boolean {
  if (caller.workspaceIds === null || reach === null) return true;
  return reach.some((w) => caller.workspaceIds!.includes(w));
}

/** Whether `reach` lies wholly within the caller's workspaces (an unconfined caller holds everything). */
export function reachWithin(caller: View, reach: Reach): boolean {
  if (caller.workspaceIds === null) return true;
  return reach !== null && reach.every((w) => caller.workspaceIds!.includes(w));
}

/**
 * A reach as the caller may see it: for a confined caller only its
 * intersection with the caller's workspaces (null, the whole organisation,
 * names no workspace and stays null).
 */
export function reachShown(caller: View, reach: Reach): string[] | null {
  if (reach === null) return null;
  if (caller.workspaceIds === null) return [...reach];
  return reach.filter((w) => caller.workspaceIds!.includes(w));
}

/** SQL of {@link reachVisible} for a `text[]` reach expression (null: the whole organisation). */
export function reachVisibleSql(caller: View, reach: RawBuilder<unknown>): RawBuilder<SqlBool> {
  if (caller.workspaceIds === null) return sql<SqlBool>`true`;
  return sql<SqlBool>`(${reach} is null or ${reach} && ${sql.val([...caller.workspaceIds])}::text[])`;
}

/** SQL of {@link reachShown} for a `text[]` reach expression, in the original order. */
export function reachShownSql(caller: View, reach: RawBuilder<unknown>): RawBuilder<string[] | null> {
  if (caller.workspaceIds === null) return sql<string[] | null>`${reach}`;
  return sql<string[] | null>`(case when ${reach} is null then null
    else array(select w from unnest(${reach}) with ordinality as r(w, n) where w = any(${sql.val([...caller.workspaceIds])}::text[]) order by n) end)`;
}

/** SQL of {@link keyReach} over a key's and its membership's `workspace_ids` columns. */
export function keyReachSql(key: RawBuilder<unknown>, membership: RawBuilder<unknown>): RawBuilder<string[] | null> {
  return sql<string[] | null>`(case when ${key} is null then ${membership} when ${membership} is null then ${key}
    else array(select unnest(${key}) intersect select unnest(${membership})) end)`;
}

/** Roles that run the organisation: granting, changing or removing them is an organisation-level change. */
const ORGANISATION_ROLES: readonly Role[] = ['owner', 'admin'];

/** A role a confined caller may grant: member or viewer; owner and admin need an unconfined caller. */
export function requireGrantable(caller: Caller, role: string, permission: Permission): void {
  if (isConfined(caller) && (ORGANISATION_ROLES as readonly string[]).includes(role)) {
    throw confinedRefusal(permission, `grant the ${role} role`, 'role');
  }
}

/** Whether the caller may change a person, an invitation or a key of `reach` (holding `role`): {@link requireChangeable} without the refusal. */
export function mayChange(caller: Caller, target: { reach: Reach; role?: string }): boolean {
  if (!reachWithin(caller, target.reach)) return false;
  return !(target.role !== undefined && isConfined(caller) && (ORGANISATION_ROLES as readonly string[]).includes(target.role));
}

/**
 * Guards a change by `caller` to a person, an invitation or a key of `reach`
 * (holding `role`, for people and invitations): outside the caller's view it
 * does not exist (`missing`, the same 404 a made-up id gets); visible but
 * reaching beyond the caller's workspaces, or holding an organisation role,
 * it is a 403 naming `permission`.
 */
export function requireChangeable(caller: Caller, target: { reach: Reach; role?: string }, permission: Permission, what: string, missing: () => ApiError): void {
  if (!reachVisible(caller, target.reach)) throw missing();
  if (!reachWithin(caller, target.reach)) throw confinedRefusal(permission, `${what} reaching beyond its workspaces`);
  if (!mayChange(caller, target)) throw confinedRefusal(permission, `${what} holding the ${target.role} role`);
}

/** The 404 of a person, invitation or key that does not exist for the caller. */
export function missingRecord(what: string, field = 'id'): () => ApiError {
  return () => notFound(what, field);
}
