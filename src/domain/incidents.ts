import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { notFound } from '../pipeline/errors';
import { isoText } from '../repo/monitors';
import { workspaceFilter } from './tenancy';

const STATUSES = ['open', 'acknowledged', 'resolved', 'suppressed'];
const UNRESOLVED = ['open', 'acknowledged', 'suppressed'];

function selectIncidents(db: Db, caller: Caller) {
  let q = db.selectFrom('incidents as i')
    .leftJoin('monitors as m', 'm.id', 'i.monitor_id')
    .leftJoin('analytics_sites as s', 's.id', 'i.analytics_site_id')
    .select([
      'i.id', 'i.monitor_id', 'm.name as monitor_name', 'i.analytics_site_id', 's.domain as site_domain', 'i.title', 'i.cause', 'i.status', 'i.severity', 'i.root_incident_id', 'i.workspace_id',
      'i.postmortem_body', 'i.postmortem_author', isoText('i.postmortem_updated_at').as('postmortem_updated_at'),
      isoText('i.started_at').as('started_at'), isoText('i.resolved_at').as('resolved_at'), isoText('i.acknowledged_at').as('acknowledged_at'),
      sql<number | null>`case when i.resolved_at is null then null else floor(extract(epoch from i.resolved_at - i.started_at))::int end`.as('duration_seconds'),
    ])
    .where('i.organization_id', '=', caller.organizationId);
  const ws = workspaceFilter(caller.workspaceIds);
  if (ws) q = q.where('i.workspace_id', 'in', ws);
  return q;
}

type Row = Awaited<ReturnType<ReturnType<typeof selectIncidents>['execute']>>[number];

/**
 * An incident as v1 shows it. A traffic drop (docs/analytics.md) has no
 * monitor: `monitorId` and `monitorName`, required strings in v1, carry its
 * site's id and domain, and `analyticsSiteId` (null for a monitor's) tells.
 */
function incidentOut(r: Row) {
  return {
    id: r.id, monitorId: r.monitor_id ?? r.analytics_site_id ?? '', monitorName: r.monitor_name ?? r.site_domain ?? '', title: r.title, cause: r.cause as never, status: r.status as never,
    severity: r.severity as never, startedAt: r.started_at, resolvedAt: r.resolved_at, durationSeconds: r.duration_seconds,
    acknowledgedAt: r.acknowledged_at, rootIncidentId: r.root_incident_id, analyticsSiteId: r.analytics_site_id,
  };
}

/**
 * Incidents, newest first. `status` filters by one status (an unknown value is
 * ignored); `open=true` keeps the three unresolved states; `limit` defaults to
 * 50 and is clamped to 200.
 */
export async function listIncidents(db: Db, caller: Caller, query: { status?: string; open?: boolean; limit?: number }) {
  let q = selectIncidents(db, caller);
  if (query.status && STATUSES.includes(query.status)) q = q.where('i.status', '=', query.status);
  if (query.open) q = q.where('i.status', 'in', UNRESOLVED);
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 200);
  const rows = await q.orderBy('i.started_at', 'desc').orderBy('i.id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...incidentOut(r), hasPostmortem: r.postmortem_body !== null }));
}

/** One incident with its workspace and postmortem. */
export async function getIncident(db: Db, caller: Caller, id: string) {
  const r = await selectIncidents(db, caller).where('i.id', '=', id).executeTakeFirst();
  if (!r) throw notFound('incident', 'id');
  return {
    ...incidentOut(r), hasPostmortem: r.postmortem_body !== null, workspaceId: r.workspace_id,
    postmortem: r.postmortem_body === null ? null : { body: r.postmortem_body, authorName: r.postmortem_author ?? '', updatedAt: r.postmortem_updated_at! },
  };
}

/** The timeline of an incident, oldest first. */
export async function incidentEvents(db: Db, caller: Caller, id: string) {
  await getIncident(db, caller, id);
  const rows = await db.selectFrom('incident_events')
    .select(['id', 'incident_id', 'kind', isoText('at').as('at'), 'actor_type', 'actor_id', 'actor_name', 'message', 'public', 'from_status', 'to_status'])
    .where('incident_id', '=', id).where('organization_id', '=', caller.organizationId).orderBy('seq').execute();
  return rows.map((e) => ({
    id: e.id, incidentId: e.incident_id, kind: e.kind as never, at: e.at,
    actor: e.actor_type ? { type: e.actor_type as never, id: e.actor_id, name: e.actor_name } : null,
    message: e.message, public: e.public, fromStatus: e.from_status as never, toStatus: e.to_status as never,
  }));
}
