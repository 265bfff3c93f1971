/**
 * Incident timeline entries (state changes, acknowledgements, comments,
 * escalation steps) of the incidents the caller sees, by when they happened.
 * The checks' own entries of a monitor's outage (opened, status changed,
 * resolved) are exported without their message: it is the check's result,
 * which names what the monitor's config names (a URL, a host, a DNS record),
 * and an export carries neither check results nor monitor config.
 */
import { sql } from 'kysely';
import { confined, isoOf, within, type ExportEntity } from '../entity';

/** Timeline kinds whose message the engine writes from a check's result (src/engine/incidents.ts). */
const CHECK_WORDED = ['opened', 'status_changed', 'resolved'];

export const incidentEvents: ExportEntity = {
  columns: ['id', 'incidentId', 'kind', 'at', 'actorType', 'actorId', 'actorName', 'message', 'public', 'fromStatus', 'toStatus'],
  permission: 'incident:read',
  hourly: false,
  time: 'occurrence (at)',
  query: (db, scope) => db.selectFrom('incident_events as e')
    .innerJoin('incidents as i', 'i.id', 'e.incident_id')
    .select([
      'e.id', 'e.incident_id as incidentId', 'e.kind', isoOf('e.at').as('at'), 'e.actor_type as actorType', 'e.actor_id as actorId',
      'e.actor_name as actorName',
      // People's words on these kinds are comments (a kind of their own); an analytics traffic drop (no monitor) words its own.
      sql<string | null>`case when i.monitor_id is not null and e.kind = any(${sql.val(CHECK_WORDED)}::text[]) then null else e.message end`.as('message'),
      'e.public', 'e.from_status as fromStatus', 'e.to_status as toStatus',
    ])
    .where('e.organization_id', '=', scope.organizationId)
    .where('i.organization_id', '=', scope.organizationId)
    .where(confined('i.workspace_id', scope))
    .where(within('e.at', scope))
    .orderBy('e.at').orderBy('e.seq'),
};
