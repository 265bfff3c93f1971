import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { isoText } from './monitors';

/** Which hosts and whose monitors a read covers. */
export interface HostFilter {
  organizationId: string;
  /** Workspaces whose monitors count (caller confinement); null for every workspace. Hosts themselves are never filtered by it. */
  workspaceIds: readonly string[] | null;
  /** One host. */
  id?: string;
  /** Only these hosts (an empty list selects none). */
  ids?: readonly string[];
}

/** The SQL condition "monitor `m` is visible under `workspaceIds`". */
function monitorVisible(workspaceIds: readonly string[] | null) {
  if (workspaceIds === null) return sql<SqlBool>`true`;
  return sql<SqlBool>`m.workspace_id = any(${sql.val([...workspaceIds])}::text[])`;
}

/**
 * A monitor's status as every read shows it: `paused` when paused, else the
 * stored one (the same rule as the monitor reads).
 */
const EFFECTIVE = sql`case when m.paused then 'paused' else m.status end`;

/**
 * Hosts with their `status`, `pinned` and `spanning` figures, in one query.
 *
 * A monitor is exclusive to a host when that host is the only one it is
 * linked to (counted over all its links: hosts are organisation-wide, so
 * every caller sees them all). Only monitors visible to the filter count,
 * so a confined key never learns anything about monitors outside its
 * workspaces. The status is ranked down > degraded > up > pending > paused:
 * see `hostStatus` in src/domain/hosts.ts for the meaning.
 */
export function selectHosts(db: Db, f: HostFilter) {
  const visible = monitorVisible(f.workspaceIds);
  let q = db.selectFrom('hosts as h')
    .leftJoinLateral(
      (eb) => eb.selectFrom(sql<{ rank: number; exclusive: boolean }>`(
          select case ${EFFECTIVE} when 'down' then 5 when 'degraded' then 4 when 'up' then 3 when 'pending' then 2 else 1 end as rank,
            (select count(*) from monitor_hosts o where o.monitor_id = m.id) = 1 as exclusive
          from monitor_hosts mh
          join monitors m on m.id = mh.monitor_id and m.organization_id = h.organization_id
          where mh.host_id = h.id and ${visible}
        )`.as('x'))
        .select([
          sql<number>`count(*) filter (where x.exclusive)::int`.as('pinned'),
          sql<number>`count(*) filter (where not x.exclusive)::int`.as('spanning'),
          sql<number | null>`max(x.rank) filter (where x.exclusive)`.as('worst'),
        ])
        .as('s'),
      (join) => join.onTrue(),
    )
    .select([
      'h.id', 'h.name', 'h.provider', 'h.address', 'h.notes', isoText('h.created_at').as('created_at'),
      sql<number>`coalesce(s.pinned, 0)`.as('pinned'),
      sql<number>`coalesce(s.spanning, 0)`.as('spanning'),
      sql<number | null>`s.worst`.as('worst'),
    ])
    .where('h.organization_id', '=', f.organizationId);
  if (f.id !== undefined) q = q.where('h.id', '=', f.id);
  if (f.ids !== undefined) q = q.where(sql<SqlBool>`h.id = any(${sql.val([...f.ids])}::text[])` as Expression<SqlBool>);
  return q.orderBy('h.name').orderBy('h.id');
}

export type HostRow = Awaited<ReturnType<ReturnType<typeof selectHosts>['execute']>>[number];

/** The status rank `selectHosts` computes, back to its name. */
export const RANKED_STATUS: Record<number, 'down' | 'degraded' | 'up' | 'pending' | 'paused'> = {
  5: 'down', 4: 'degraded', 3: 'up', 2: 'pending', 1: 'paused',
};

/** The monitors of one host visible under `workspaceIds`, each with the other hosts it runs on. */
export function selectHostMonitors(db: Db, organizationId: string, hostId: string, workspaceIds: readonly string[] | null) {
  return db.selectFrom('monitor_hosts as mh')
    .innerJoin('monitors as m', 'm.id', 'mh.monitor_id')
    .select([
      'm.id', 'm.name', 'm.kind',
      sql<string>`${EFFECTIVE}`.as('status'),
      sql<{ id: string; name: string }[]>`coalesce((select json_agg(json_build_object('id', h2.id, 'name', h2.name) order by h2.name, h2.id)
        from monitor_hosts o join hosts h2 on h2.id = o.host_id where o.monitor_id = m.id and o.host_id <> mh.host_id), '[]'::json)`.as('also_on'),
    ])
    .where('mh.host_id', '=', hostId)
    .where('m.organization_id', '=', organizationId)
    .where(monitorVisible(workspaceIds) as Expression<SqlBool>)
    .orderBy('m.name').orderBy('m.id');
}

/** The ids of the hosts a monitor is linked to, in name order. */
export async function hostIdsOfMonitor(db: Db, monitorId: string): Promise<string[]> {
  const rows = await db.selectFrom('monitor_hosts as mh').innerJoin('hosts as h', 'h.id', 'mh.host_id')
    .select('h.id').where('mh.monitor_id', '=', monitorId).orderBy('h.name').orderBy('h.id').execute();
  return rows.map((r) => r.id);
}

/** The organisation's host whose name equals `name` ignoring case and trailing dots (other than `exceptId`), if any. */
export async function hostByName(db: Db, organizationId: string, name: string, exceptId?: string) {
  let q = db.selectFrom('hosts').select(['id', 'name'])
    .where('organization_id', '=', organizationId)
    .where(sql<SqlBool>`lower(rtrim(name, '.')) = lower(rtrim(${name}::text, '.'))` as Expression<SqlBool>);
  if (exceptId !== undefined) q = q.where('id', '<>', exceptId);
  return q.executeTakeFirst();
}
