/**
 * Hosts, by creation. Hosts belong to the organisation, so a key confined to
 * workspaces exports every host (as GET /hosts lists them), but `monitorIds`
 * names only the monitors it sees.
 */
import { sql } from 'kysely';
import { confined, isoOf, within, type ExportEntity } from '../entity';

export const hosts: ExportEntity = {
  columns: ['id', 'name', 'provider', 'address', 'notes', 'monitorIds', 'createdAt'],
  permission: 'monitor:read',
  hourly: false,
  time: 'creation (createdAt)',
  query: (db, scope) => db.selectFrom('hosts as h')
    .select([
      'h.id', 'h.name', 'h.provider', 'h.address', 'h.notes',
      sql<string[]>`array(select mh.monitor_id from monitor_hosts mh join monitors m on m.id = mh.monitor_id
        where mh.host_id = h.id and m.organization_id = h.organization_id and ${confined('m.workspace_id', scope)} order by mh.monitor_id)`.as('monitorIds'),
      isoOf('h.created_at').as('createdAt'),
    ])
    .where('h.organization_id', '=', scope.organizationId)
    .where(within('h.created_at', scope))
    .orderBy('h.created_at').orderBy('h.id'),
};
