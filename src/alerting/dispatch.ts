import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import type { AlertEvent } from './channels/channel';
import { enqueue } from './queue';
import { underMaintenance } from './maintenance';

/** Attempts of one delivery before it is given up (graphile-worker backs off exponentially between them). */
export const DELIVERY_ATTEMPTS = 8;

export interface AlertSubject { id: string; organization_id: string; monitor_id: string | null; status: string }

/**
 * Queues `event` for every enabled, confirmed channel of the incident's
 * monitor, in the caller's transaction. A suppressed incident pages nobody,
 * and acknowledgements and resolutions go only where the opening went (an
 * incident that paged nobody — suppressed, or in maintenance — stays silent).
 * During a maintenance window of the monitor nothing pages anybody.
 */
export async function queueAlerts(db: Db, incident: AlertSubject, event: AlertEvent, inMaintenance?: boolean): Promise<number> {
  if (!incident.monitor_id) return 0;
  // Callers that already know (the result writer, for a whole batch) say so; others ask.
  const quiet = inMaintenance ?? (await underMaintenance(db, [incident.monitor_id], new Date())).size > 0;
  if (quiet) return 0;
  let channelIds: string[];
  if (event === 'incident.opened') {
    if (incident.status === 'suppressed') return 0;
    channelIds = (await db.selectFrom('monitor_channels as mc').innerJoin('notification_channels as c', 'c.id', 'mc.channel_id')
      .select('c.id').where('mc.monitor_id', '=', incident.monitor_id).where('c.enabled', '=', true)
      .where('c.confirmed_at', 'is not', null).execute()).map((r) => r.id);
  } else {
    channelIds = (await db.selectFrom('deliveries as d').innerJoin('notification_channels as c', 'c.id', 'd.channel_id')
      .select('c.id').distinct().where('d.incident_id', '=', incident.id).where('d.event', 'in', ['incident.opened', 'incident.escalated'])
      .where('c.enabled', '=', true).execute()).map((r) => r.id);
  }
  return queueDeliveries(db, incident, event, channelIds);
}

/** Queues one delivery of `event` per channel (escalation steps name their own channels). */
export async function queueDeliveries(db: Db, incident: Pick<AlertSubject, 'id' | 'organization_id'>, event: AlertEvent, channelIds: string[]): Promise<number> {
  for (const channelId of new Set(channelIds)) {
    const id = newId('dlv');
    await db.insertInto('deliveries').values({ id, organization_id: incident.organization_id, channel_id: channelId, incident_id: incident.id, event }).execute();
    await enqueue(db, 'deliver', { deliveryId: id }, { maxAttempts: DELIVERY_ATTEMPTS });
  }
  return new Set(channelIds).size;
}
