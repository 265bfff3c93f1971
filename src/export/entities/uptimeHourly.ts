/**
 * Hourly availability roll-ups of the monitors the caller sees, per monitor
 * and UTC hour: checks, failures, degraded checks, uptime, mean response time
 * and, for SNMP monitors, the readings of the hour (sum, count, min, max and
 * unit per reading). An hourly series: 92 days a request at most (the
 * roll-ups are kept 90 days). Not the raw check results.
 */
import { confined, hourWithin, isoOf, meanOf, uptimeOf, type ExportEntity } from '../entity';

export const uptimeHourly: ExportEntity = {
  columns: ['monitorId', 'monitorName', 'hour', 'checks', 'failures', 'degraded', 'uptime', 'avgResponseTimeMs', 'readings'],
  permission: 'monitor:read',
  hourly: true,
  time: 'the UTC hour (each hour overlapping the window)',
  // Monitor by monitor along the roll-ups' primary key (monitor_id, hour): the cursor streams without a sort.
  query: (db, scope) => db.selectFrom('monitors as m')
    .innerJoin('rollup_hourly as r', 'r.monitor_id', 'm.id')
    .select([
      'm.id as monitorId', 'm.name as monitorName', isoOf('r.hour').as('hour'), 'r.checks', 'r.failures', 'r.degraded',
      uptimeOf('r.checks', 'r.failures').as('uptime'), meanOf('r.response_sum_ms', 'r.response_count').as('avgResponseTimeMs'), 'r.readings',
    ])
    .where('m.organization_id', '=', scope.organizationId)
    .where(confined('m.workspace_id', scope))
    .where(hourWithin('r.hour', scope))
    .orderBy('m.id').orderBy('r.hour'),
};
