import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import type { CheckResult } from './kinds/kind';
import type { ResultSubject } from './results';
import { queueAlerts } from '../alerting/dispatch';
import { startEscalation } from '../alerting/escalation';

const UNRESOLVED = ['open', 'acknowledged', 'suppressed'] as const;

/** Records one timeline entry of an incident. */
export async function addEvent(db: Db, e: {
  incidentId: string; organizationId: string; kind: string; at?: Date; message?: string | null;
  fromStatus?: string | null; toStatus?: string | null; public?: boolean;
  actor?: { type: string; id: string | null; name: string | null } | null;
}): Promise<void> {
  await db.insertInto('incident_events').values({
    id: newId('evt'), incident_id: e.incidentId, organization_id: e.organizationId, kind: e.kind, at: e.at ?? new Date(),
    message: e.message ?? null, from_status: e.fromStatus ?? null, to_status: e.toStatus ?? null, public: e.public ?? false,
    actor_type: e.actor?.type ?? 'system', actor_id: e.actor?.id ?? null, actor_name: e.actor?.name ?? null,
  }).execute();
}

/** The unresolved incident of a monitor, if any. */
function openIncidentOf(db: Db, monitorId: string) {
  return db.selectFrom('incidents').select(['id', 'status', 'root_incident_id'])
    .where('monitor_id', '=', monitorId).where('status', 'in', [...UNRESOLVED])
    .orderBy('started_at', 'desc').limit(1).executeTakeFirst();
}

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

/**
 * Opens, resolves or annotates incidents when a monitor's status moves:
 * going down opens one (suppressed, with rootIncidentId, when a dependency is
 * down); leaving down resolves it. Every move while an incident is open is a
 * timeline entry.
 */
export async function applyTransition(db: Db, monitor: ResultSubject, from: string, to: string, result: CheckResult, at: Date, inMaintenance?: boolean): Promise<void> {
  const open = await openIncidentOf(db, monitor.id);
  if (to === 'down' && !open) {
    const root = await rootCause(db, monitor);
    const id = newId('inc');
    const status = root ? 'suppressed' : 'open';
    await db.insertInto('incidents').values({
      id, organization_id: monitor.organization_id, workspace_id: monitor.workspace_id, monitor_id: monitor.id,
      title: `${monitor.name} is down`, cause: result.cause ?? 'check_failed', severity: 'critical', status,
      root_incident_id: root, started_at: at,
    }).execute();
    await addEvent(db, { incidentId: id, organizationId: monitor.organization_id, kind: 'opened', at, message: result.message, fromStatus: null, toStatus: 'open' });
    if (root) {
      await addEvent(db, { incidentId: id, organizationId: monitor.organization_id, kind: 'suppressed', at,
        message: `A monitor this one depends on is down (incident ${root}).`, fromStatus: 'open', toStatus: 'suppressed' });
      return;
    }
    const incident = { id, organization_id: monitor.organization_id, monitor_id: monitor.id, status };
    await queueAlerts(db, incident, 'incident.opened', inMaintenance);
    await startEscalation(db, incident, at);
    return;
  }
  if (!open) return;
  // Any status but down ends the outage, whatever came before (a monitor
  // paused while down comes back through pending).
  if (to !== 'down') {
    await db.updateTable('incidents').set({ status: 'resolved', resolved_at: at }).where('id', '=', open.id).execute();
    await addEvent(db, { incidentId: open.id, organizationId: monitor.organization_id, kind: 'resolved', at,
      message: `${monitor.name} is ${to}: ${result.message}`, fromStatus: open.status, toStatus: 'resolved' });
    await queueAlerts(db, { id: open.id, organization_id: monitor.organization_id, monitor_id: monitor.id, status: 'resolved' }, 'incident.resolved', inMaintenance);
    return;
  }
  await addEvent(db, { incidentId: open.id, organizationId: monitor.organization_id, kind: 'status_changed', at,
    message: `${monitor.name} went from ${from} to ${to}: ${result.message}` });
}
