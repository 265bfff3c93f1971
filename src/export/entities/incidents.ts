/**
 * Incidents, by start. A traffic drop of an analytics site has no monitor:
 * `monitorId` is null and `analyticsSiteId` names the site. The postmortem
 * itself is the `postmortems` entity.
 */
import { sql } from 'kysely';
import { confined, isoOf, within, type ExportEntity } from '../entity';

export const incidents: ExportEntity = {
  columns: [
    'id', 'workspaceId', 'monitorId', 'monitorName', 'analyticsSiteId', 'title', 'cause', 'severity', 'status', 'rootIncidentId',
    'startedAt', 'acknowledgedAt', 'resolvedAt', 'durationSeconds', 'hasPostmortem',
  ],
  permission: 'incident:read',
  hourly: false,
  time: 'start (startedAt)',
  query: (db, scope) => db.selectFrom('incidents as i')
    .leftJoin('monitors as m', 'm.id', 'i.monitor_id')
    .select([
      'i.id', 'i.workspace_id as workspaceId', 'i.monitor_id as monitorId', 'm.name as monitorName', 'i.analytics_site_id as analyticsSiteId',
      'i.title', 'i.cause', 'i.severity', 'i.status', 'i.root_incident_id as rootIncidentId',
      isoOf('i.started_at').as('startedAt'), isoOf('i.acknowledged_at').as('acknowledgedAt'), isoOf('i.resolved_at').as('resolvedAt'),
      sql<number | null>`case when i.resolved_at is null then null else floor(extract(epoch from i.resolved_at - i.started_at))::int end`.as('durationSeconds'),
      sql<boolean>`i.postmortem_body is not null`.as('hasPostmortem'),
    ])
    .where('i.organization_id', '=', scope.organizationId)
    .where(confined('i.workspace_id', scope))
    .where(within('i.started_at', scope))
    .orderBy('i.started_at').orderBy('i.id'),
};
