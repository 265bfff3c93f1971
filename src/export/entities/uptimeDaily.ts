/**
 * Daily availability roll-ups of the monitors the caller sees, per monitor
 * and UTC day: checks, failures, degraded checks, uptime (the pass
 * percentage, as GET /monitors/{id}/history), downtime and mean response
 * time. Not the raw check results.
 */
import { confined, dayWithin, meanOf, uptimeOf, type ExportEntity } from '../entity';

export const uptimeDaily: ExportEntity = {
  columns: ['monitorId', 'monitorName', 'day', 'checks', 'failures', 'degraded', 'uptime', 'downtimeSeconds', 'avgResponseTimeMs'],
  permission: 'monitor:read',
  hourly: false,
  time: 'the UTC day (each day overlapping the window)',
  query: (db, scope) => db.selectFrom('monitors as m')
    .innerJoin('rollup_daily as d', 'd.monitor_id', 'm.id')
    .select([
      'm.id as monitorId', 'm.name as monitorName', 'd.day', 'd.checks', 'd.failures', 'd.degraded', uptimeOf('d.checks', 'd.failures').as('uptime'),
      'd.downtime_seconds as downtimeSeconds', meanOf('d.response_sum_ms', 'd.response_count').as('avgResponseTimeMs'),
    ])
    .where('m.organization_id', '=', scope.organizationId)
    .where(confined('m.workspace_id', scope))
    .where(dayWithin('d.day', scope))
    .orderBy('m.id').orderBy('d.day'),
};
