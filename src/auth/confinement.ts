/**
 * Workspace confinement (spec, Authentication §3: "anything outside does not
 * exist for the key"), the parts that are not a row filter: what an
 * organisation-wide change needs, and how people's and keys' reach is seen
 * through a confined caller. docs/roles.md says the same in words.
 */
import type { Caller } from './caller';
import type { Permission } from './roles';
import { ApiError } from '../pipeline/errors';

/** True when the caller is confined to some workspaces (a key's or a membership's confinement). */
export function isConfined(caller: Caller): boolean {
  return caller.workspaceIds !== null;
}

/**
 * 403 `workspace_confined` naming `permission` (spec rule 7: a 403 names the
 * permission): the caller holds it only within its workspaces, and `what`
 * reaches the whole organisation.
 */
export function confinedRefusal(permission: Permission, what: string): ApiError {
  return new ApiError(403, 'workspace_confined',
    `Confined to workspaces, this caller holds ${permission} only within them and cannot ${what}: that reaches the whole organisation.`,
    { permission });
}

/** Throws {@link confinedRefusal} when the caller is confined. */
export function requireWholeOrganisation(caller: Caller, permission: Permission, what: string): void {
  if (isConfined(caller)) throw confinedRefusal(permission, what);
}
