/**
 * Hourly analytics roll-ups of the sites the caller sees, per site, UTC hour,
 * dimension and value (docs/analytics.md, "Roll-up rows": dimension and value
 * empty for the totals; a prop's value is `event␟key␟value` with U+001F).
 * Visitors, pageviews, custom events, visits, bounces and the visits'
 * duration. An hourly series: 92 days a request at most. Never raw events,
 * sessions or visitor hashes.
 */
import { confined, hourWithin, isoOf, type ExportEntity } from '../entity';

export const analyticsHourly: ExportEntity = {
  columns: ['siteId', 'siteDomain', 'hour', 'dimension', 'value', 'visitors', 'pageviews', 'events', 'visits', 'bounces', 'durationSeconds'],
  permission: 'monitor:read',
  hourly: true,
  time: 'the UTC hour (each hour overlapping the window)',
  // Site by site along the roll-ups' primary key (site_id, dimension, hour, value): the cursor streams without a sort.
  query: (db, scope) => db.selectFrom('analytics_sites as s')
    .innerJoin('analytics_hourly as a', 'a.site_id', 's.id')
    .select([
      's.id as siteId', 's.domain as siteDomain', isoOf('a.hour').as('hour'), 'a.dimension', 'a.value', 'a.visitors', 'a.pageviews', 'a.events',
      'a.visits', 'a.bounces', 'a.duration_s as durationSeconds',
    ])
    .where('s.organization_id', '=', scope.organizationId)
    .where(confined('s.workspace_id', scope))
    .where(hourWithin('a.hour', scope))
    .orderBy('s.id').orderBy('a.dimension').orderBy('a.hour').orderBy('a.value'),
};
