import type { JobHelpers } from 'graphile-worker';
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import { addEvent } from '../incidents/timeline';
import type { Services } from '../pipeline/context';
import { channelKinds, isChannelKind } from './channels';
import type { AlertEvent, AlertIncident, AlertMessage } from './channels/channel';
import { alertText, type TextDetail } from './channels/text';
import { deliveryContext } from './context';
import { metrics } from '../observability/metrics';

/** Loads what one delivery needs: the delivery, its channel and its incident. */
async function load(db: Db, deliveryId: string) {
  const { rows } = await sql<{
    id: string; event: string; organization_id: string; status: string; channel_id: string | null; kind: string | null; name: string | null;
    target_enc: string | null; secret_enc: string | null; config: Record<string, string> | null; enabled: boolean | null;
    incident_id: string | null; title: string | null; cause: string | null; severity: string | null; istatus: string | null;
    monitor_id: string | null; monitor_name: string | null; started_at: Date | null; acknowledged_at: Date | null; resolved_at: Date | null;
  }>`select d.id, d.event, d.organization_id, d.status, d.channel_id, c.kind, c.name, c.target_enc, c.secret_enc, c.config, c.enabled,
      i.id as incident_id, i.title, i.cause, i.severity, i.status as istatus, i.monitor_id, m.name as monitor_name,
      i.started_at, i.acknowledged_at, i.resolved_at
    from deliveries d left join notification_channels c on c.id = d.channel_id
      left join incidents i on i.id = d.incident_id left join monitors m on m.id = i.monitor_id
    where d.id = ${deliveryId}`.execute(db);
  return rows[0];
}

/** The check's words for an opening, and who acted for an acknowledgement, from the timeline. */
async function textDetail(db: Db, incidentId: string, event: string): Promise<TextDetail> {
  const kind = event === 'incident.acknowledged' ? 'acknowledged' : 'opened';
  const e = await db.selectFrom('incident_events').select(['message', 'actor_name']).where('incident_id', '=', incidentId)
    .where('kind', '=', kind).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return event === 'incident.acknowledged' ? { actor: e?.actor_name ?? null } : { detail: e?.message ?? null };
}

/**
 * The `deliver` task: sends one alert through its channel's kind and records
 * the attempt. A temporary failure throws so the queue retries it later; a
 * permanent one (or the last attempt) marks the delivery failed. Each outcome
 * is a `notification` entry on the incident's timeline.
 */
export function deliverTask(db: Db, secrets: SecretBox, services: Services) {
  return async (payload: unknown, helpers: JobHelpers): Promise<void> => {
    const { deliveryId } = payload as { deliveryId: string };
    const d = await load(db, deliveryId);
    if (!d || d.status !== 'pending') return;
    const finish = async (status: 'delivered' | 'failed', error: string | null) => {
      await db.updateTable('deliveries').set({ status, last_error: error, ...(status === 'delivered' ? { delivered_at: new Date() } : {}) }).where('id', '=', deliveryId).execute();
      if (d.incident_id) {
        await addEvent(db, { incidentId: d.incident_id, organizationId: d.organization_id, kind: 'notification',
          message: status === 'delivered' ? `Sent ${d.event} to ${d.name} (${d.kind}).` : `Could not reach ${d.name ?? 'a removed channel'}: ${error}` });
      }
    };
    if (!d.channel_id || !d.kind || !isChannelKind(d.kind) || !d.enabled || !d.target_enc) return finish('failed', 'the channel was removed or disabled');
    const target = secrets.open(d.target_enc);
    if (target === null) return finish('failed', 'the channel target cannot be decrypted');
    const incident: AlertIncident | null = d.incident_id ? {
      id: d.incident_id, title: d.title!, cause: d.cause!, severity: d.severity!, status: d.istatus!, monitorId: d.monitor_id ?? '',
      monitorName: d.monitor_name ?? '', startedAt: d.started_at!.toISOString(), acknowledgedAt: d.acknowledged_at?.toISOString() ?? null,
      resolvedAt: d.resolved_at?.toISOString() ?? null,
    } : null;
    const message: AlertMessage = {
      id: d.id, event: d.event as AlertEvent, incident, occurredAt: new Date().toISOString(),
      text: alertText(d.event as AlertEvent, incident, d.incident_id ? await textDetail(db, d.incident_id, d.event) : {}),
    };
    const started = Date.now();
    const result = await channelKinds[d.kind].deliver(
      { id: d.channel_id, name: d.name!, target, secret: d.secret_enc ? secrets.open(d.secret_enc) : null, config: d.config ?? {} },
      message, deliveryContext(services),
    );
    await db.insertInto('delivery_attempts').values({ delivery_id: deliveryId, ok: result.delivered, error: result.error, duration_ms: Date.now() - started }).execute();
    await db.updateTable('deliveries').set((eb) => ({ attempts: eb('attempts', '+', 1) })).where('id', '=', deliveryId).execute();
    const outcome = result.delivered ? 'delivered' : result.permanent || helpers.job.attempts >= helpers.job.max_attempts ? 'failed' : 'retrying';
    metrics.deliveries.inc({ channel_kind: d.kind, outcome });
    if (outcome === 'delivered') return finish('delivered', null);
    if (outcome === 'failed') return finish('failed', result.error);
    await db.updateTable('deliveries').set({ last_error: result.error }).where('id', '=', deliveryId).execute();
    throw new Error(result.error ?? 'delivery failed');
  };
}
