/**
 * The permission names of the API (docs/roles.md), typed so a misspelt one
 * in a page fails the build. What the caller holds comes from `/me`
 * (`membership.permissions`, exactly as the server checks them): the app
 * keeps no role table of its own, and the server still checks every call.
 */
export type Permission =
  | 'monitor:read' | 'monitor:create' | 'monitor:update' | 'monitor:pause' | 'monitor:delete'
  | 'incident:read' | 'incident:acknowledge' | 'incident:resolve' | 'incident:comment'
  | 'status_page:read' | 'status_page:manage'
  | 'notification_channel:read' | 'notification_channel:manage'
  | 'workspace:read' | 'workspace:update'
  | 'member:read' | 'member:invite' | 'member:update_role' | 'member:remove'
  | 'maintenance:manage' | 'oncall:read'
  | 'agent:read' | 'agent:enroll' | 'agent:delete'
  | 'api_key:read' | 'api_key:manage'
  | 'audit_log:read' | 'billing:read' | 'billing:manage' | 'org:update';
