import type { Permission, Role } from './roles';
import type { PlansTable } from '../db/schema';

/** The plan limits an organisation is held to. */
export type Plan = PlansTable;

/** Who is calling, resolved from the credential; the only source of tenancy. */
export interface Caller {
  kind: 'key' | 'session';
  organizationId: string;
  userId: string;
  membershipId: string;
  role: Role;
  /** Role permissions intersected with the key's scopes. */
  permissions: ReadonlySet<Permission>;
  /** Workspaces the caller is confined to; null when it sees every workspace. */
  workspaceIds: readonly string[] | null;
  key: { id: string; name: string; prefix: string; scopes: string[]; workspaceIds: string[] | null } | null;
  plan: Plan;
  /** How audit entries name the caller. */
  actor: { type: 'api_key' | 'user' | 'system'; id: string; name: string };
}

/**
 * Permissions a plan must include besides the role granting them (spec:
 * "audit_log:read (Business plan and above)"): below it the permission is
 * not held, so the answer is the 403 naming it.
 */
const PLAN_GATED: Partial<Record<Permission, (plan: Plan) => boolean>> = {
  'audit_log:read': (plan) => plan.audit_log_included,
};

/** True when the caller holds `permission` (by role, key scopes and plan). */
export function can(caller: Caller, permission: Permission): boolean {
  if (!caller.permissions.has(permission)) return false;
  const gate = PLAN_GATED[permission];
  return gate ? gate(caller.plan) : true;
}

/** True when a row of `workspaceId` is visible to the caller. */
export function seesWorkspace(caller: Caller, workspaceId: string | null): boolean {
  if (caller.workspaceIds === null) return true;
  return workspaceId !== null && caller.workspaceIds.includes(workspaceId);
}
