/**
 * The audit log, oldest first. `changes` never held a credential (sealed
 * fields are recorded as `{changed: true}` when written, src/domain/audit.ts).
 * A key confined to workspaces sees the entries of its workspaces only, as
 * GET /audit; reading it needs audit_log:read and a plan with the audit log.
 */
import { confined, isoOf, within, type ExportEntity } from '../entity';

export const auditLog: ExportEntity = {
  columns: ['id', 'at', 'action', 'resourceType', 'resourceId', 'workspaceId', 'actorType', 'actorId', 'actorName', 'actorUserId', 'actorUserEmail', 'actorUserName', 'changes'],
  permission: 'audit_log:read',
  hourly: false,
  time: 'occurrence (at)',
  query: (db, scope) => db.selectFrom('audit_log as a')
    .select([
      'a.id', isoOf('a.at').as('at'), 'a.action', 'a.resource_type as resourceType', 'a.resource_id as resourceId', 'a.workspace_id as workspaceId',
      'a.actor_type as actorType', 'a.actor_id as actorId', 'a.actor_name as actorName',
      'a.actor_user_id as actorUserId', 'a.actor_user_email as actorUserEmail', 'a.actor_user_name as actorUserName', 'a.changes',
    ])
    .where('a.organization_id', '=', scope.organizationId)
    .where(confined('a.workspace_id', scope))
    .where(within('a.at', scope))
    .orderBy('a.seq'),
};
