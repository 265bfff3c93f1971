/**
 * The role → permission table: the one place that says what each role may do.
 * Documented in docs/roles.md; keep the two in step.
 */

/** Every permission name of the API (spec, Authentication §8). */
export const PERMISSIONS = [
  'monitor:read', 'monitor:create', 'monitor:update', 'monitor:pause', 'monitor:delete',
  'incident:read', 'incident:acknowledge', 'incident:resolve', 'incident:comment',
  'status_page:read', 'status_page:manage',
  'notification_channel:read', 'notification_channel:manage',
  'workspace:read', 'workspace:update',
  'member:read', 'member:invite', 'member:update_role', 'member:remove',
  'maintenance:manage', 'oncall:read',
  'agent:read', 'agent:enroll', 'agent:delete',
  'api_key:read', 'api_key:manage',
  'audit_log:read', 'billing:read', 'billing:manage', 'org:update',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const READS: Permission[] = [
  'monitor:read', 'incident:read', 'status_page:read', 'notification_channel:read',
  'workspace:read', 'member:read', 'oncall:read', 'agent:read',
];

const OPERATE: Permission[] = [
  ...READS,
  'monitor:create', 'monitor:update', 'monitor:pause', 'monitor:delete',
  'incident:acknowledge', 'incident:resolve', 'incident:comment',
  'status_page:manage', 'notification_channel:manage', 'maintenance:manage',
  'agent:enroll', 'agent:delete', 'api_key:read', 'api_key:manage',
];

const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  // Everything, including billing and the organisation itself.
  owner: PERMISSIONS,
  // Runs the organisation day to day; cannot buy or change the plan.
  admin: PERMISSIONS.filter((p) => p !== 'billing:manage'),
  // Builds and operates monitoring; does not manage people, workspaces or billing.
  member: OPERATE,
  // Reads; a viewer's key can never write anything.
  viewer: READS,
};

/** True when `role` is one of the known roles. */
export function isRole(role: string): role is Role {
  return (ROLES as readonly string[]).includes(role);
}

/** True when `name` is a known permission. */
export function isPermission(name: string): name is Permission {
  return (PERMISSIONS as readonly string[]).includes(name);
}

/** The permissions of a role (none for an unknown role). */
export function permissionsOf(role: string): readonly Permission[] {
  return isRole(role) ? ROLE_PERMISSIONS[role] : [];
}

/** Rank for "may not grant more than you have" comparisons: owner highest. */
export function roleRank(role: string): number {
  return isRole(role) ? ROLES.length - ROLES.indexOf(role) : 0;
}
