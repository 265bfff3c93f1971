/**
 * Error issues (one row per fingerprint, not per event) of the projects the
 * caller sees, by first sighting. The window keeps the issues seen in it:
 * first seen before `to` and last seen at or after `from`. Never the events
 * themselves (their payloads may carry what an SDK captured).
 */
import { sql, type SqlBool } from 'kysely';
import { confined, isoOf, type ExportEntity } from '../entity';

export const errorIssues: ExportEntity = {
  columns: [
    'id', 'projectId', 'projectName', 'title', 'type', 'value', 'culprit', 'level', 'status', 'timesSeen', 'usersSeen',
    'firstSeenAt', 'lastSeenAt', 'firstRelease', 'lastRelease', 'resolvedInRelease', 'ignoredUntil',
  ],
  permission: 'monitor:read',
  hourly: false,
  time: 'sightings (firstSeenAt to lastSeenAt overlapping the window)',
  query: (db, scope) => db.selectFrom('error_issues as i')
    .innerJoin('error_projects as p', 'p.id', 'i.project_id')
    .select([
      'i.id', 'i.project_id as projectId', 'p.name as projectName', 'i.title', 'i.type', 'i.value', 'i.culprit', 'i.level',
      // An ignore whose hours ran out reads as unresolved, as in GET /errors/issues.
      sql<string>`case when i.status = 'ignored' and i.ignored_until is not null and i.ignored_until <= now() then 'unresolved' else i.status end`.as('status'),
      'i.times_seen as timesSeen',
      sql<number>`(select count(*) from error_issue_users u where u.issue_id = i.id)::int`.as('usersSeen'),
      isoOf('i.first_seen_at').as('firstSeenAt'), isoOf('i.last_seen_at').as('lastSeenAt'), 'i.first_release as firstRelease',
      'i.last_release as lastRelease',
      sql<string | null>`case when i.status = 'resolved' then i.resolved_in_release end`.as('resolvedInRelease'),
      sql<string | null>`case when i.status = 'ignored' and (i.ignored_until is null or i.ignored_until > now())
        then to_char(i.ignored_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end`.as('ignoredUntil'),
    ])
    .where('i.organization_id', '=', scope.organizationId)
    .where(confined('p.workspace_id', scope))
    .where(sql<SqlBool>`i.first_seen_at < ${scope.to}`)
    .where(scope.from ? sql<SqlBool>`i.last_seen_at >= ${scope.from}` : sql<SqlBool>`true`)
    .orderBy('i.first_seen_at').orderBy('i.id'),
};
