import type { JobHelpers } from 'graphile-worker';
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import { addEvent, eventRow, type IncidentEventInput } from '../incidents/timeline';
import type { Services } from '../pipeline/context';
import { channelKinds, isChannelKind } from './channels';
import type { AlertErrorIssue, AlertEvent, AlertIncident, AlertMessage } from './channels/channel';
import { alertText, type TextDetail } from './channels/text';
import { deliveryContext } from './context';
import { metrics } from '../observability/metrics';

/**
 * Loads what one delivery needs in one statement (a mass outage runs
 * thousands of these at once): the delivery, its channel, its incident, and
 * from the timeline the check's words for an opening or who acknowledged —
 * or, for an error alert, its issue and project and, from the issue's
 * timeline, the release and environment of the event behind the alert.
 */
async function load(db: Db, deliveryId: string) {
  const { rows } = await sql<{
    id: string; event: string; organization_id: string; status: string; channel_id: string | null; kind: string | null; name: string | null;
    target_enc: string | null; secret_enc: string | null; config: Record<string, string> | null; enabled: boolean | null;
    incident_id: string | null; title: string | null; cause: string | null; severity: string | null; istatus: string | null;
    monitor_id: string | null; monitor_name: string | null; started_at: Date | null; acknowledged_at: Date | null; resolved_at: Date | null;
    detail_message: string | null; detail_actor: string | null;
    error_issue_id: string | null; issue_project_id: string | null; project_name: string | null; issue_title: string | null; issue_culprit: string | null;
    issue_level: string | null; issue_times_seen: string | null; issue_release: string | null; issue_environment: string | null;
  }>`select d.id, d.event, d.organization_id, d.status, d.channel_id, c.kind, c.name, c.target_enc, c.secret_enc, c.config, c.enabled,
      i.id as incident_id, i.title, i.cause, i.severity, i.status as istatus,
      -- A traffic drop (monitor_id null) is named by its analytics site: its id and domain.
      coalesce(i.monitor_id, i.analytics_site_id) as monitor_id, coalesce(m.name, s.domain) as monitor_name,
      i.started_at, i.acknowledged_at, i.resolved_at, x.message as detail_message, x.actor_name as detail_actor,
      d.error_issue_id, ei.project_id as issue_project_id, p.name as project_name, ei.title as issue_title, ei.culprit as issue_culprit,
      ei.level as issue_level, ei.times_seen as issue_times_seen, ie.release as issue_release, ie.environment as issue_environment
    from deliveries d left join notification_channels c on c.id = d.channel_id
      left join incidents i on i.id = d.incident_id left join monitors m on m.id = i.monitor_id
      left join analytics_sites s on s.id = i.analytics_site_id
      left join lateral (select e.message, e.actor_name from incident_events e where e.incident_id = d.incident_id
        and e.kind = case when d.event = 'incident.acknowledged' then 'acknowledged' else 'opened' end order by e.seq desc limit 1) x on true
      left join error_issues ei on ei.id = d.error_issue_id left join error_projects p on p.id = ei.project_id
      -- The entry written with the delivery (the latest of its kind: a second regression before the first page is sent shares its release).
      left join lateral (select e.release, e.environment from error_issue_events e where e.issue_id = d.error_issue_id
        and e.kind = case when d.event = 'error_issue.created' then 'first_seen' else 'regressed' end order by e.seq desc limit 1) ie on true
    where d.id = ${deliveryId}`.execute(db);
  return rows[0];
}

/**
 * Records one attempt, where the delivery stands and, for an outcome, its
 * note on the incident's timeline — one statement, as a mass outage runs
 * thousands of these at once.
 */
async function recordAttempt(db: Db, deliveryId: string, a: { ok: boolean; error: string | null; durationMs: number; status: 'delivered' | 'failed' | null; note: IncidentEventInput | null }) {
  const n = a.note ? eventRow(a.note) : null;
  const note = n
    ? sql`, note as (insert into incident_events (id, incident_id, organization_id, kind, at, message, from_status, to_status, public, actor_type, actor_id, actor_name)
        values (${n.id}, ${n.incident_id}, ${n.organization_id}, ${n.kind}, ${n.at}, ${n.message}, null, null, false, ${n.actor_type}, null, null))`
    : sql``;
  await sql`with attempt as (
      insert into delivery_attempts (delivery_id, ok, error, duration_ms) values (${deliveryId}, ${a.ok}, ${a.error}, ${a.durationMs}))${note}
    update deliveries set attempts = attempts + 1, last_error = ${a.error},
      status = coalesce(${a.status}::text, status), delivered_at = case when ${a.status}::text = 'delivered' then now() else delivered_at end
    where id = ${deliveryId}`.execute(db);
}

/**
 * The `deliver` task: sends one alert through its channel's kind and records
 * the attempt. A temporary failure throws so the queue retries it later; a
 * permanent one (or the last attempt) marks the delivery failed. Each outcome
 * of an incident's alert is a `notification` entry on the incident's
 * timeline (an error issue's alerts leave none on the issue's).
 */
export function deliverTask(db: Db, secrets: SecretBox, services: Services) {
  return async (payload: unknown, helpers: JobHelpers): Promise<void> => {
    const { deliveryId } = payload as { deliveryId: string };
    const d = await load(db, deliveryId);
    if (!d || d.status !== 'pending') return;
    /** The timeline note of an outcome. */
    const noteOf = (status: 'delivered' | 'failed', error: string | null): IncidentEventInput => ({
      incidentId: d.incident_id!, organizationId: d.organization_id, kind: 'notification',
      message: status === 'delivered' ? `Sent ${d.event} to ${d.name} (${d.kind}).` : `Could not reach ${d.name ?? 'a removed channel'}: ${error}`,
    });
    /** A delivery that fails before any attempt: its status and its note. */
    const finish = async (status: 'failed', error: string) => {
      await db.updateTable('deliveries').set({ status, last_error: error }).where('id', '=', deliveryId).execute();
      if (d.incident_id) await addEvent(db, noteOf(status, error));
    };
    if (!d.channel_id || !d.kind || !isChannelKind(d.kind) || !d.enabled || !d.target_enc) return finish('failed', 'the channel was removed or disabled');
    const target = secrets.open(d.target_enc);
    if (target === null) return finish('failed', 'the channel target cannot be decrypted');
    const incident: AlertIncident | null = d.incident_id ? {
      id: d.incident_id, title: d.title!, cause: d.cause!, severity: d.severity!, status: d.istatus!, monitorId: d.monitor_id ?? '',
      monitorName: d.monitor_name ?? '', startedAt: d.started_at!.toISOString(), acknowledgedAt: d.acknowledged_at?.toISOString() ?? null,
      resolvedAt: d.resolved_at?.toISOString() ?? null,
    } : null;
    const errorIssue: AlertErrorIssue | null = d.error_issue_id ? {
      id: d.error_issue_id, projectId: d.issue_project_id!, projectName: d.project_name!, title: d.issue_title!, culprit: d.issue_culprit,
      level: d.issue_level!, release: d.issue_release, environment: d.issue_environment, timesSeen: Number(d.issue_times_seen),
      url: `${services.baseUrl()}/api/v1/errors/issues/${encodeURIComponent(d.error_issue_id)}`,
    } : null;
    const detail: TextDetail = errorIssue ? { errorIssue } : !d.incident_id ? {} : d.event === 'incident.acknowledged' ? { actor: d.detail_actor } : { detail: d.detail_message };
    const message: AlertMessage = {
      id: d.id, event: d.event as AlertEvent, incident, errorIssue, occurredAt: new Date().toISOString(), text: alertText(d.event as AlertEvent, incident, detail),
    };
    const started = Date.now();
    const result = await channelKinds[d.kind].deliver(
      { id: d.channel_id, name: d.name!, target, secret: d.secret_enc ? secrets.open(d.secret_enc) : null, config: d.config ?? {} },
      message, deliveryContext(services),
    );
    const outcome = result.delivered ? 'delivered' : result.permanent || helpers.job.attempts >= helpers.job.max_attempts ? 'failed' : 'retrying';
    metrics.deliveries.inc({ channel_kind: d.kind, outcome });
    const note = outcome === 'retrying' || !d.incident_id ? null : noteOf(outcome, result.error);
    await recordAttempt(db, deliveryId, { ok: result.delivered, error: result.error, durationMs: Date.now() - started, status: outcome === 'retrying' ? null : outcome, note });
    if (outcome !== 'retrying') return;
    throw new Error(result.error ?? 'delivery failed');
  };
}
