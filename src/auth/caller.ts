import type { Permission, Role } from './roles';
import type { PlansTable } from '../db/schema';

/** The plan limits an organisation is held to. */
export type Plan = PlansTable;

/** Who is calling, resolved from the credential; the only source of tenancy. */
export interface Caller {
  /** `anonymous`: an operation that needs no credential (sign-in, password reset); it holds nothing. */
  kind: 'key' | 'session' | 'anonymous';
  organizationId: string;
  userId: string;
  membershipId: string;
  role: Role;
  /** Role permissions intersected with the key's scopes. */
  permissions: ReadonlySet<Permission>;
  /** Workspaces the caller is confined to; null when it sees every workspace. */
  workspaceIds: readonly string[] | null;
  key: { id: string; name: string; prefix: string; scopes: string[]; workspaceIds: string[] | null } | null;
  /** The sign-in session making the request (kind `session`), else null. */
  session: { id: string } | null;
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

/** The caller of an operation that needs no credential: no organisation, no permission. */
export const ANONYMOUS: Caller = Object.freeze({
  kind: 'anonymous', organizationId: '', userId: '', membershipId: '', role: 'viewer', permissions: new Set<Permission>(),
  workspaceIds: [], key: null, session: null,
  plan: { code: '', name: '', rank: -1, monitor_cap: 0, interval_floor_seconds: 0, history_retention_days: 0, sms_included: false, audit_log_included: false, status_page_cap: 0, member_cap: 0 },
  actor: { type: 'system', id: 'anonymous', name: 'anonymous' },
}) as Caller;
