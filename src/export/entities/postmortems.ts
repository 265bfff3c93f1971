/** Postmortems of the incidents the caller sees, by when they were last written. */
import { confined, isoOf, within, type ExportEntity } from '../entity';

export const postmortems: ExportEntity = {
  columns: ['incidentId', 'incidentTitle', 'workspaceId', 'authorName', 'updatedAt', 'body'],
  permission: 'incident:read',
  hourly: false,
  time: 'last edit (updatedAt)',
  query: (db, scope) => db.selectFrom('incidents as i')
    .select([
      'i.id as incidentId', 'i.title as incidentTitle', 'i.workspace_id as workspaceId', 'i.postmortem_author as authorName',
      isoOf('i.postmortem_updated_at').as('updatedAt'), 'i.postmortem_body as body',
    ])
    .where('i.organization_id', '=', scope.organizationId)
    .where('i.postmortem_body', 'is not', null)
    .where(confined('i.workspace_id', scope))
    .where(within('i.postmortem_updated_at', scope))
    .orderBy('i.postmortem_updated_at').orderBy('i.id'),
};
