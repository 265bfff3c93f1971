import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import type { AlertEvent } from './channels/channel';
import { enqueueMany } from '../jobs/queue';
import { underMaintenance } from './maintenance';

/** Attempts of one delivery before it is given up (graphile-worker backs off exponentially between them). */
export const DELIVERY_ATTEMPTS = 8;

/**
 * A channel `c` the workspace in `column` may use: its own or an
 * organisation-wide one. Every incident's alert keeps to it (a ws1 incident
 * never reaches a ws2 channel), which also keeps the delivery notes on the
 * timeline naming only channels the incident's readers can see. Links are
 * checked when they are made (setMonitorChannels, stepChannels); this holds it
 * for what was stored before, such as deliveries an acknowledgement follows.
 */
function usableBy(column: string): Expression<SqlBool> {
  return sql<SqlBool>`(c.workspace_id is null or c.workspace_id = ${sql.ref(column)})`;
}

/** An incident to page about: a monitor's, or an analytics site's (a traffic drop, monitor_id null). */
export interface AlertSubject { id: string; organization_id: string; monitor_id: string | null; analytics_site_id?: string | null; status: string }

/**
 * Queues `event` for every enabled, confirmed channel of each incident's
 * monitor (of its analytics site for a traffic drop) that the incident's
 * workspace may use (see usableBy), in the caller's
 * transaction, in a few statements whatever the number of incidents. A
 * suppressed incident pages nobody, and acknowledgements and resolutions go
 * only where the opening went (an incident that paged nobody — suppressed,
 * or in maintenance — stays silent). During a maintenance window of the
 * monitor nothing pages anybody: `quiet` names the monitors in one (looked up
 * when not given); sites have no maintenance windows.
 */
export async function queueAlertsFor(db: Db, incidents: AlertSubject[], event: AlertEvent, quiet?: ReadonlySet<string>): Promise<number> {
  const pageable = incidents.filter((i) => !(event === 'incident.opened' && i.status === 'suppressed'));
  if (pageable.length === 0) return 0;
  const monitorIds = [...new Set(pageable.flatMap((i) => (i.monitor_id === null ? [] : [i.monitor_id])))];
  const silent = quiet ?? (monitorIds.length ? new Set((await underMaintenance(db, monitorIds, new Date())).keys()) : new Set<string>());
  const live = pageable.filter((i) => i.monitor_id === null || !silent.has(i.monitor_id));
  if (live.length === 0) return 0;
  const pairs: { incident: AlertSubject; channelId: string }[] = [];
  if (event === 'incident.opened') {
    const ofMonitors = live.filter((i) => i.monitor_id !== null);
    const links = ofMonitors.length === 0 ? [] : await db.selectFrom('monitor_channels as mc').innerJoin('notification_channels as c', 'c.id', 'mc.channel_id')
      .innerJoin('monitors as m', 'm.id', 'mc.monitor_id').where(usableBy('m.workspace_id'))
      .select(['mc.monitor_id', 'c.id']).where('mc.monitor_id', 'in', [...new Set(ofMonitors.map((i) => i.monitor_id!))])
      .where('c.enabled', '=', true).where('c.confirmed_at', 'is not', null).execute();
    for (const i of ofMonitors) for (const l of links) if (l.monitor_id === i.monitor_id) pairs.push({ incident: i, channelId: l.id });
    const ofSites = live.filter((i) => i.monitor_id === null && i.analytics_site_id);
    const siteLinks = ofSites.length === 0 ? [] : await db.selectFrom('analytics_site_channels as sc').innerJoin('notification_channels as c', 'c.id', 'sc.channel_id')
      .innerJoin('analytics_sites as s', 's.id', 'sc.site_id').where(usableBy('s.workspace_id'))
      .select(['sc.site_id', 'c.id']).where('sc.site_id', 'in', [...new Set(ofSites.map((i) => i.analytics_site_id!))])
      .where('c.enabled', '=', true).where('c.confirmed_at', 'is not', null).execute();
    for (const i of ofSites) for (const l of siteLinks) if (l.site_id === i.analytics_site_id) pairs.push({ incident: i, channelId: l.id });
  } else {
    const sent = await db.selectFrom('deliveries as d').innerJoin('notification_channels as c', 'c.id', 'd.channel_id')
      .innerJoin('incidents as i', 'i.id', 'd.incident_id').where(usableBy('i.workspace_id'))
      .select(['d.incident_id', 'c.id']).distinct().where('d.incident_id', 'in', live.map((i) => i.id))
      .where('d.event', 'in', ['incident.opened', 'incident.escalated']).where('c.enabled', '=', true).execute();
    for (const i of live) for (const r of sent) if (r.incident_id === i.id) pairs.push({ incident: i, channelId: r.id });
  }
  return insertDeliveries(db, event, pairs);
}

/** One incident's alerts (see queueAlertsFor). */
export async function queueAlerts(db: Db, incident: AlertSubject, event: AlertEvent): Promise<number> {
  return queueAlertsFor(db, [incident], event);
}

/** Queues one delivery of `event` per channel (escalation steps name their own channels: stepChannels keeps them to the incident's workspace). */
export async function queueDeliveries(db: Db, incident: Pick<AlertSubject, 'id' | 'organization_id'>, event: AlertEvent, channelIds: string[]): Promise<number> {
  return insertDeliveries(db, event, [...new Set(channelIds)].map((channelId) => ({ incident, channelId })));
}

async function insertDeliveries(db: Db, event: AlertEvent, pairs: { incident: Pick<AlertSubject, 'id' | 'organization_id'>; channelId: string }[]): Promise<number> {
  if (pairs.length === 0) return 0;
  const rows = pairs.map((p) => ({ id: newId('dlv'), organization_id: p.incident.organization_id, channel_id: p.channelId, incident_id: p.incident.id, event }));
  await db.insertInto('deliveries').values(rows).execute();
  await enqueueMany(db, 'deliver', rows.map((r) => ({ deliveryId: r.id })), DELIVERY_ATTEMPTS);
  return rows.length;
}
