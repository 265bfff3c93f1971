import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { workspaceFilter } from './scope';

/** Unresolved incident states (spec: `open=true` means these three). */
export const UNRESOLVED = ['open', 'acknowledged', 'suppressed'] as const;

export interface MonitorFilter {
  organizationId: string;
  workspaceIds: readonly string[] | null;
  id?: string;
  /** Every tag must be present (AND). */
  tags?: string[];
  /** False leaves out `last_check_detail` (only the single read shows it; it can be large). */
  detail?: boolean;
}

/** A timestamp column rendered by PostgreSQL as RFC 3339 UTC text (no Date round trip). */
export function isoText(column: string) {
  return sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The tables `selectMonitors` reads (what its cached results depend on). */
export const MONITOR_READ_TABLES = ['monitors', 'workspaces', 'monitor_hosts', 'hosts', 'incidents'] as const;

/** Monitors with their workspace, hosts and open incident, in one query (read columns only: never the config). */
export function selectMonitors(db: Db, f: MonitorFilter) {
  let q = db.selectFrom('monitors as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select([
      'm.id', 'm.name', 'm.kind', 'm.status', 'm.paused', 'm.enabled', 'm.interval_seconds', 'm.tags', 'm.workspace_id',
      'm.last_response_time_ms', 'm.last_message', 'm.uptime_24h', 'm.uptime_30d', 'm.confirmations', 'm.depends_on', 'm.probe_id',
      f.detail === false ? sql<null>`null`.as('last_check_detail') : 'm.last_check_detail',
      isoText('m.status_since').as('status_since'), isoText('m.last_checked_at').as('last_checked_at'),
      isoText('m.created_at').as('created_at'), isoText('m.updated_at').as('updated_at'),
      'w.name as workspace_name', 'w.slug as workspace_slug',
      sql<{ id: string; name: string }[]>`coalesce((select json_agg(json_build_object('id', h.id, 'name', h.name) order by h.name, h.id)
        from monitor_hosts mh join hosts h on h.id = mh.host_id where mh.monitor_id = m.id), '[]'::json)`.as('hosts'),
      sql<string | null>`(select i.id from incidents i where i.monitor_id = m.id and i.status in ('open', 'acknowledged', 'suppressed')
        order by i.started_at desc limit 1)`.as('open_incident_id'),
    ])
    .where('m.organization_id', '=', f.organizationId);
  const ws = workspaceFilter(f.workspaceIds);
  if (ws) q = q.where('m.workspace_id', 'in', ws);
  if (f.id !== undefined) q = q.where('m.id', '=', f.id);
  if (f.tags?.length) q = q.where(sql<SqlBool>`m.tags @> ${sql.val(f.tags)}::text[]` as Expression<SqlBool>);
  return q.orderBy('m.created_at').orderBy('m.id');
}

export type MonitorRow = Awaited<ReturnType<ReturnType<typeof selectMonitors>['execute']>>[number];

/** How many monitors the organisation has (for the plan cap). */
export async function countMonitors(db: Db, organizationId: string): Promise<number> {
  const r = await db.selectFrom('monitors').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
  return Number(r.n);
}
