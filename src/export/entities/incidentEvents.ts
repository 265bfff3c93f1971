/**
 * Incident timeline entries (state changes, acknowledgements, comments,
 * escalation steps) of the incidents the caller sees, by when they happened.
 */
import { confined, isoOf, within, type ExportEntity } from '../entity';

export const incidentEvents: ExportEntity = {
  columns: ['id', 'incidentId', 'kind', 'at', 'actorType', 'actorId', 'actorName', 'message', 'public', 'fromStatus', 'toStatus'],
  permission: 'incident:read',
  hourly: false,
  time: 'occurrence (at)',
  query: (db, scope) => db.selectFrom('incident_events as e')
    .innerJoin('incidents as i', 'i.id', 'e.incident_id')
    .select([
      'e.id', 'e.incident_id as incidentId', 'e.kind', isoOf('e.at').as('at'), 'e.actor_type as actorType', 'e.actor_id as actorId',
      'e.actor_name as actorName', 'e.message', 'e.public', 'e.from_status as fromStatus', 'e.to_status as toStatus',
    ])
    .where('e.organization_id', '=', scope.organizationId)
    .where('i.organization_id', '=', scope.organizationId)
    .where(confined('i.workspace_id', scope))
    .where(within('e.at', scope))
    .orderBy('e.at').orderBy('e.seq'),
};
