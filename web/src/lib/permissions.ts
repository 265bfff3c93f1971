/**
 * What a role may do, mirrored from the server's table (src/auth/roles.ts,
 * docs/roles.md) so the app hides what the person may not do — used only
 * when `/me` does not state the caller's permissions itself. The server
 * still checks every call: this only decides which controls are shown.
 */
export type Permission =
  | 'monitor:create' | 'monitor:update' | 'monitor:pause' | 'monitor:delete'
  | 'incident:acknowledge' | 'incident:resolve' | 'incident:comment'
  | 'status_page:manage' | 'notification_channel:manage' | 'maintenance:manage' | 'org:update';

const OPERATE: Permission[] = [
  'monitor:create', 'monitor:update', 'monitor:pause', 'monitor:delete',
  'incident:acknowledge', 'incident:resolve', 'incident:comment', 'status_page:manage', 'notification_channel:manage',
  'maintenance:manage',
];

const BY_ROLE: Record<string, readonly Permission[]> = {
  owner: [...OPERATE, 'org:update'],
  admin: [...OPERATE, 'org:update'],
  member: OPERATE,
  viewer: [],
};

/** The permissions of `role`, narrowed to a key's scopes when it has any. */
export function permissionsOf(role: string, scopes: readonly string[] = []): Set<Permission> {
  const all = BY_ROLE[role] ?? [];
  return new Set(scopes.length ? all.filter((p) => scopes.includes(p)) : all);
}
