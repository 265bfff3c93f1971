/**
 * Monitors, by creation: name, kind, workspace, state, schedule, tags,
 * dependencies, probe and hosts. Never the config, nor anything read from it
 * (URL, host, record name, headers, body, credentials): the spec says monitor
 * `config` is never returned by any read, and an export is a read (issue 24
 * decided this over the spec's older "config with credential-like fields
 * removed"). Never the heartbeat token, never check results (last message,
 * detail).
 */
import { sql } from 'kysely';
import { confined, isoOf, within, type ExportEntity } from '../entity';

export const monitors: ExportEntity = {
  columns: [
    'id', 'name', 'kind', 'workspaceId', 'workspaceName', 'status', 'enabled', 'intervalSeconds', 'confirmations', 'tags',
    'dependsOn', 'probeId', 'hostIds', 'statusSince', 'lastCheckedAt', 'uptime24h', 'uptime30d', 'createdAt', 'updatedAt',
  ],
  permission: 'monitor:read',
  hourly: false,
  time: 'creation (createdAt)',
  query: (db, scope) => db.selectFrom('monitors as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select([
      'm.id', 'm.name', 'm.kind', 'm.workspace_id as workspaceId', 'w.name as workspaceName',
      sql<string>`case when m.paused then 'paused' else m.status end`.as('status'),
      'm.enabled', 'm.interval_seconds as intervalSeconds', 'm.confirmations', 'm.tags', 'm.depends_on as dependsOn', 'm.probe_id as probeId',
      sql<string[]>`array(select mh.host_id from monitor_hosts mh where mh.monitor_id = m.id order by mh.host_id)`.as('hostIds'),
      isoOf('m.status_since').as('statusSince'), isoOf('m.last_checked_at').as('lastCheckedAt'),
      'm.uptime_24h as uptime24h', 'm.uptime_30d as uptime30d', isoOf('m.created_at').as('createdAt'), isoOf('m.updated_at').as('updatedAt'),
    ])
    .where('m.organization_id', '=', scope.organizationId)
    .where(confined('m.workspace_id', scope))
    .where(within('m.created_at', scope))
    .orderBy('m.created_at').orderBy('m.id'),
};
