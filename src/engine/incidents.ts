import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { addEvents, type IncidentEventInput } from '../incidents/timeline';
import type { CheckResult } from './kinds/kind';
import type { ResultSubject } from './results';
import { sql } from 'kysely';
import { queueAlertsFor } from '../alerting/dispatch';
import { startEscalations } from '../alerting/escalation';

const UNRESOLVED = ['open', 'acknowledged', 'suppressed'] as const;

/**
 * The incident a new outage of `monitor` is the blast radius of: the open
 * incident of a dependency that is down (followed to its own root).
 */
async function rootCause(db: Db, monitor: ResultSubject): Promise<string | null> {
  if (monitor.depends_on.length === 0) return null;
  const root = await db.selectFrom('incidents as i').innerJoin('monitors as m', 'm.id', 'i.monitor_id')
    .select(['i.id', 'i.root_incident_id'])
    .where('i.monitor_id', 'in', monitor.depends_on).where('i.organization_id', '=', monitor.organization_id)
    .where('i.status', 'in', [...UNRESOLVED]).where('m.status', '=', 'down')
    .orderBy('i.started_at').limit(1).executeTakeFirst();
  return root ? root.root_incident_id ?? root.id : null;
}

/** One monitor whose status moved, as the result writer saw it. */
export interface Move { monitor: ResultSubject; from: string; to: string; result: CheckResult; at: Date }


/**
 * Opens, resolves or annotates incidents for every monitor of a result batch
 * whose status moved, in a handful of statements whatever the batch size:
 * going down opens one (suppressed, with rootIncidentId, when a dependency is
 * down); any other status ends it (a monitor paused while down comes back
 * through pending). Every move while an incident is open is a timeline entry.
 * Alerts and escalations are queued for the opened and resolved incidents,
 * except for monitors in `quiet` (maintenance).
 */
export async function applyTransitions(db: Db, moves: Move[], quiet: ReadonlySet<string>): Promise<void> {
  if (moves.length === 0) return;
  const open = await db.selectFrom('incidents').select(['id', 'status', 'monitor_id'])
    .where('monitor_id', 'in', moves.map((m) => m.monitor.id)).where('status', 'in', [...UNRESOLVED])
    .orderBy('started_at', 'desc').execute();
  const openOf = new Map<string, { id: string; status: string }>();
  for (const o of open) if (o.monitor_id && !openOf.has(o.monitor_id)) openOf.set(o.monitor_id, o);

  const created: { id: string; organization_id: string; workspace_id: string; monitor_id: string; title: string; cause: string; severity: string; status: string; root_incident_id: string | null; started_at: Date }[] = [];
  const resolved: { id: string; organization_id: string; monitor_id: string; at: Date }[] = [];
  const events: IncidentEventInput[] = [];
  // Monitors without dependencies first, so that a dependant going down in the
  // same batch finds its dependency's new incident.
  const ordered = [...moves].sort((a, b) => a.monitor.depends_on.length - b.monitor.depends_on.length);
  const createdFor = new Map<string, { id: string; root: string | null }>();
  for (const { monitor, from, to, result, at } of ordered) {
    const current = openOf.get(monitor.id);
    if (to === 'down' && !current) {
      const inBatch = monitor.depends_on.map((d) => createdFor.get(d)).find(Boolean);
      // Dependencies are rare: their lookup stays per monitor.
      const root = inBatch ? inBatch.root ?? inBatch.id : await rootCause(db, monitor);
      const id = newId('inc');
      created.push({ id, organization_id: monitor.organization_id, workspace_id: monitor.workspace_id, monitor_id: monitor.id,
        title: `${monitor.name} is down`, cause: result.cause ?? 'check_failed', severity: 'critical', status: root ? 'suppressed' : 'open',
        root_incident_id: root, started_at: at });
      createdFor.set(monitor.id, { id, root });
      events.push({ incidentId: id, organizationId: monitor.organization_id, kind: 'opened', at, message: result.message, fromStatus: null, toStatus: 'open' });
      if (root) {
        events.push({ incidentId: id, organizationId: monitor.organization_id, kind: 'suppressed', at,
          message: `A monitor this one depends on is down (incident ${root}).`, fromStatus: 'open', toStatus: 'suppressed' });
      }
    } else if (current && to !== 'down') {
      resolved.push({ id: current.id, organization_id: monitor.organization_id, monitor_id: monitor.id, at });
      events.push({ incidentId: current.id, organizationId: monitor.organization_id, kind: 'resolved', at,
        message: `${monitor.name} is ${to}: ${result.message}`, fromStatus: current.status, toStatus: 'resolved' });
    } else if (current) {
      events.push({ incidentId: current.id, organizationId: monitor.organization_id, kind: 'status_changed', at,
        message: `${monitor.name} went from ${from} to ${to}: ${result.message}` });
    }
  }
  if (created.length) await db.insertInto('incidents').values(created).execute();
  if (resolved.length) {
    await sql`update incidents i set status = 'resolved', resolved_at = v.at
      from jsonb_to_recordset(${JSON.stringify(resolved.map((r) => ({ id: r.id, at: r.at.toISOString() })))}::jsonb) as v(id text, at timestamptz)
      where i.id = v.id`.execute(db);
  }
  if (events.length) await addEvents(db, events);
  const opened = created.filter((c) => c.status === 'open');
  await queueAlertsFor(db, opened, 'incident.opened', quiet);
  await queueAlertsFor(db, resolved.map((r) => ({ ...r, status: 'resolved' })), 'incident.resolved', quiet);
  await startEscalations(db, opened);
}

/**
 * Before `monitorId` is deleted: the unresolved incidents that were the blast
 * radius of its incidents stand on their own from now on (rootIncidentId
 * cleared; a suppressed one opens and alerts like any new outage), and no
 * monitor depends on it any more.
 */
export async function releaseDependants(db: Db, organizationId: string, monitorId: string, at = new Date()): Promise<void> {
  await sql`update monitors set depends_on = array_remove(depends_on, ${monitorId})
    where organization_id = ${organizationId} and depends_on @> array[${monitorId}]::text[]`.execute(db);
  const { rows } = await sql<{ id: string; organization_id: string; monitor_id: string | null; status: string; was: string; started_at: Date }>`
    with roots as (select id from incidents where monitor_id = ${monitorId}),
    freed as (
      select i.id, i.status as was from incidents i
      where i.organization_id = ${organizationId} and i.root_incident_id in (select id from roots)
        and i.status in ('open', 'acknowledged', 'suppressed')
      for update
    )
    update incidents i set root_incident_id = null, status = case when i.status = 'suppressed' then 'open' else i.status end
    from freed where i.id = freed.id
    returning i.id, i.organization_id, i.monitor_id, i.status, freed.was, i.started_at`.execute(db);
  if (!rows.length) return;
  await addEvents(db, rows.map((r) => ({
    incidentId: r.id, organizationId: r.organization_id, kind: 'status_changed', at, fromStatus: r.was, toStatus: r.status,
    message: 'The monitor this outage was put down to was deleted: it stands on its own now.',
  })));
  const opened = rows.filter((r) => r.was === 'suppressed');
  await queueAlertsFor(db, opened, 'incident.opened');
  await startEscalations(db, opened);
}
