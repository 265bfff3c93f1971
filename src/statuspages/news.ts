/**
 * What subscribers of status pages are told, and when: an outage of one of a
 * page's components opening (unless it is the blast radius of another, or
 * the monitor is in maintenance), each update published with `publish: true`,
 * its resolution; maintenance windows with `notifySubscribers` when they are
 * created and when each occurrence starts.
 *
 * Two queued tasks, so nothing is lost on a restart and each message is
 * retried on its own: `status_news` (queued in the transaction that made the
 * news) finds the pages and their confirmed subscribers and queues one
 * `status_notify` per subscriber, which sends the e-mail or posts the webhook
 * (under the strict outbound policy: a visitor named it).
 */
import { sql } from 'kysely';
import type { JobHelpers } from 'graphile-worker';
import type { Db } from '../db/connect';
import { enqueue, enqueueMany } from '../jobs/queue';
import type { TaskDeps } from '../jobs/tasks';
import { activeOccurrence, nextOccurrence, underMaintenance } from '../alerting/maintenance';
import { sendMail } from '../alerting/channels/email';
import { deliveryContext } from '../alerting/context';
import { postForResult } from '../alerting/http';
import { formats, translator, type Key } from './i18n';
import { STRICT_POLICY } from '../net/policy';
import { parseWebhookUrl, unsubscribeUrl } from './subscribers';

/** Attempts of one message to one subscriber. */
const ATTEMPTS = 8;
/** Subscriber jobs queued per statement. */
const CHUNK = 1000;

/** A timeline entry as it was written (src/incidents/timeline.ts). */
export interface TimelineEntry { id: string; incidentId: string; kind: string; public: boolean }

/** The news a subscriber gets. */
type News =
  | { type: 'incident'; eventId: string }
  | { type: 'maintenance'; maintenanceId: string; kind: 'scheduled' | 'started'; at?: string };

/**
 * Queues `status_news` for the timeline entries subscribers may hear of, in
 * the caller's transaction; one query finds whether any page with confirmed
 * subscribers shows the incidents' monitors at all (mostly none does).
 */
export async function queueIncidentNews(db: Db, entries: TimelineEntry[]): Promise<void> {
  const candidates = entries.filter((e) => e.kind === 'opened' || e.kind === 'resolved' || (e.kind === 'comment' && e.public));
  if (candidates.length === 0) return;
  const { rows } = await sql<{ id: string }>`select distinct i.id from incidents i
    join status_page_components c on c.monitor_id = i.monitor_id
    join status_pages p on p.id = c.page_id and p.subscribers_enabled and p.visibility <> 'private'
    where i.id = any(${sql.val([...new Set(candidates.map((e) => e.incidentId))])}::text[])
      and exists (select 1 from status_page_subscribers s where s.page_id = p.id and s.confirmed_at is not null)`.execute(db);
  const wanted = new Set(rows.map((r) => r.id));
  const news: News[] = candidates.filter((e) => wanted.has(e.incidentId)).map((e) => ({ type: 'incident', eventId: e.id }));
  await enqueueMany(db, 'status_news', news as unknown as Record<string, unknown>[]);
}

/**
 * For a window created with `notifySubscribers`: the announcement now, and
 * the news of its first occurrence starting at its start (each start queues
 * the next one's).
 */
export async function queueMaintenanceNews(db: Db, w: { id: string; notify_subscribers: boolean; starts_at: Date }): Promise<void> {
  if (!w.notify_subscribers) return;
  await enqueue(db, 'status_news', { type: 'maintenance', maintenanceId: w.id, kind: 'scheduled' });
  await enqueue(db, 'status_news', { type: 'maintenance', maintenanceId: w.id, kind: 'started', at: w.starts_at.toISOString() },
    { runAt: w.starts_at, jobKey: `status-maintenance-start:${w.id}` });
}

/** One message as every subscriber of one page gets it. */
interface Message {
  event: 'incident.opened' | 'incident.updated' | 'incident.resolved' | 'maintenance.scheduled' | 'maintenance.started';
  subjectKey: Key; title: string; text: string; at: string; componentMonitorIds: string[];
  incident?: { id: string; status: string; startedAt: string; resolvedAt: string | null };
  maintenance?: { id: string; title: string; startsAt: string; endsAt: string; description: string | null };
}

/** Pages with subscribers that show any of `monitorIds`, with their components' names. */
async function pagesShowing(db: Db, organizationId: string, monitorIds: string[]) {
  if (monitorIds.length === 0) return [];
  return db.selectFrom('status_pages as p').innerJoin('status_page_components as c', 'c.page_id', 'p.id').innerJoin('monitors as m', 'm.id', 'c.monitor_id')
    .select(['p.id', 'p.slug', 'p.name', 'p.language', 'p.custom_domain', 'p.domain_verified_at', 'c.monitor_id', sql<string>`coalesce(c.display_name, m.name)`.as('component')])
    .where('p.organization_id', '=', organizationId).where('p.subscribers_enabled', '=', true).where('p.visibility', '<>', 'private')
    .where('c.monitor_id', 'in', monitorIds).orderBy('c.position').execute();
}

/** The incident news of one timeline entry, or null when subscribers are not to hear of it. */
async function incidentMessage(db: Db, eventId: string) {
  const e = await db.selectFrom('incident_events as e').innerJoin('incidents as i', 'i.id', 'e.incident_id')
    .select(['e.kind', 'e.public', 'e.message', 'e.at', 'i.id', 'i.organization_id', 'i.monitor_id', 'i.status', 'i.root_incident_id', 'i.started_at', 'i.resolved_at'])
    .where('e.id', '=', eventId).executeTakeFirst();
  if (!e || !e.monitor_id) return null;
  const published = e.kind === 'comment' && e.public && e.message;
  if (!published) {
    // The blast radius of another outage, or an outage during maintenance, was never announced: nor is its end.
    const suppressed = e.root_incident_id !== null || (await db.selectFrom('incident_events').select('id').where('incident_id', '=', e.id).where('kind', '=', 'suppressed').executeTakeFirst());
    if (suppressed) return null;
    const opened = e.kind === 'opened' ? e.at : e.started_at;
    if ((await underMaintenance(db, [e.monitor_id], opened)).size > 0) return null;
  }
  const event = published ? 'incident.updated' : e.kind === 'opened' ? 'incident.opened' : 'incident.resolved';
  return {
    organizationId: e.organization_id, monitorId: e.monitor_id, message: published ? e.message! : null, at: e.at, event,
    incident: { id: e.id, status: e.status, startedAt: e.started_at.toISOString(), resolvedAt: e.resolved_at?.toISOString() ?? null },
  } as const;
}

/** The `status_news` task: who hears of one piece of news; queues one `status_notify` per confirmed subscriber. */
export function statusNewsTask(deps: TaskDeps) {
  const { db } = deps;
  return async (payload: unknown): Promise<void> => {
    const news = payload as News;
    let organizationId: string;
    let monitorIds: string[];
    if (news.type === 'incident') {
      const m = await incidentMessage(db, news.eventId);
      if (!m) return;
      organizationId = m.organizationId;
      monitorIds = [m.monitorId];
    } else {
      const w = await db.selectFrom('maintenance_windows').selectAll().where('id', '=', news.maintenanceId).executeTakeFirst();
      if (!w || !w.notify_subscribers) return;
      const timing = { startsAt: w.starts_at, endsAt: w.ends_at, timezone: w.timezone, recurrenceRule: w.recurrence_rule };
      if (news.kind === 'started') {
        const now = new Date();
        const current = activeOccurrence(timing, now);
        // Queue the next occurrence's start before anything else can fail.
        const after = nextOccurrence(timing, new Date(Math.max(now.getTime(), current?.endsAt.getTime() ?? 0)));
        if (after && after.startsAt > now) {
          await enqueue(db, 'status_news', { ...news, at: after.startsAt.toISOString() }, { runAt: after.startsAt, jobKey: `status-maintenance-start:${w.id}` });
        }
        // A start whose occurrence is already over (the queue was down) is not news any more.
        if (!current) return;
      }
      organizationId = w.organization_id;
      monitorIds = w.monitor_ids;
    }
    const pages = [...new Set((await pagesShowing(db, organizationId, monitorIds)).map((p) => p.id))];
    if (pages.length === 0) return;
    const subscribers = await db.selectFrom('status_page_subscribers').select(['id', 'page_id'])
      .where('page_id', 'in', pages).where('confirmed_at', 'is not', null).execute();
    for (let i = 0; i < subscribers.length; i += CHUNK) {
      await enqueueMany(db, 'status_notify', subscribers.slice(i, i + CHUNK).map((s) => ({ subscriberId: s.id, pageId: s.page_id, news })), ATTEMPTS);
    }
  };
}

/** The message of `news` as the page `page` words it. */
async function messageFor(db: Db, news: News, page: { id: string; language: string; organization_id: string }): Promise<Message | null> {
  const t = translator(page.language);
  const fmt = formats(page.language);
  if (news.type === 'incident') {
    const m = await incidentMessage(db, news.eventId);
    if (!m) return null;
    const shown = (await pagesShowing(db, page.organization_id, [m.monitorId])).filter((p) => p.id === page.id);
    const component = shown.map((p) => p.component).join(', ');
    const title = t('incident.title', { component });
    const text = m.message ?? (m.event === 'incident.opened' ? t('text.investigating', { components: component }) : t('text.resolved'));
    const subjectKey: Key = m.event === 'incident.opened' ? 'mail.opened' : m.event === 'incident.updated' ? 'mail.update' : 'mail.resolved';
    return { event: m.event, subjectKey, title, text, at: m.at.toISOString(), componentMonitorIds: [m.monitorId], incident: m.incident };
  }
  const w = await db.selectFrom('maintenance_windows').selectAll().where('id', '=', news.maintenanceId).executeTakeFirst();
  if (!w) return null;
  const timing = { startsAt: w.starts_at, endsAt: w.ends_at, timezone: w.timezone, recurrenceRule: w.recurrence_rule };
  const occurrence = nextOccurrence(timing, news.at ? new Date(news.at) : new Date()) ?? { startsAt: w.starts_at, endsAt: w.ends_at };
  const when = t('maintenance.when', { start: fmt.dateTime(occurrence.startsAt), end: fmt.dateTime(occurrence.endsAt) });
  return {
    event: news.kind === 'scheduled' ? 'maintenance.scheduled' : 'maintenance.started',
    subjectKey: news.kind === 'scheduled' ? 'mail.maintenanceScheduled' : 'mail.maintenanceStarted',
    title: w.title, text: [when, w.description].filter(Boolean).join('\n\n'), at: new Date().toISOString(), componentMonitorIds: w.monitor_ids,
    maintenance: { id: w.id, title: w.title, startsAt: occurrence.startsAt.toISOString(), endsAt: occurrence.endsAt.toISOString(), description: w.description },
  };
}

/**
 * A stored webhook URL if it still has an accepted form (subscriptions made
 * before the rule, with a user name in the URL, are not posted to), else null.
 */
function deliverableWebhook(stored: string | null): URL | null {
  if (!stored) return null;
  try {
    return parseWebhookUrl(stored);
  } catch {
    return null;
  }
}

/** The `status_notify` task: one message to one subscriber (retried on temporary failures). */
export function statusNotifyTask(deps: TaskDeps) {
  const { db, secrets, services } = deps;
  return async (payload: unknown, helpers: JobHelpers): Promise<void> => {
    const { subscriberId, news } = payload as { subscriberId: string; pageId: string; news: News };
    const sub = await db.selectFrom('status_page_subscribers as s').innerJoin('status_pages as p', 'p.id', 's.page_id')
      .select(['s.id', 's.kind', 's.target', 's.target_enc', 's.confirmed_at', 'p.id as page_id', 'p.slug', 'p.name', 'p.language', 'p.organization_id',
        'p.custom_domain', 'p.domain_verified_at', 'p.subscribers_enabled', 'p.visibility'])
      .where('s.id', '=', subscriberId).executeTakeFirst();
    // Unsubscribed, unconfirmed, or the page stopped taking subscribers meanwhile: nothing to send.
    if (!sub || !sub.confirmed_at || !sub.subscribers_enabled || sub.visibility === 'private') return;
    const message = await messageFor(db, news, { id: sub.page_id, language: sub.language, organization_id: sub.organization_id });
    if (!message) return;
    const t = translator(sub.language);
    const base = services.baseUrl();
    const pageUrl = sub.custom_domain && sub.domain_verified_at ? `https://${sub.custom_domain}` : `${base}/status/${sub.slug}`;
    const leave = unsubscribeUrl(secrets, base, sub.slug, sub.id);
    const ctx = deliveryContext(services);
    const hook = sub.kind === 'webhook' ? deliverableWebhook(secrets.open(sub.target_enc ?? '')) : null;
    if (sub.kind === 'webhook' && !hook) return; // unreadable, or a form no longer accepted: cannot be delivered, ever
    // A webhook was named by a visitor: the strict policy decides where it may lead, not the operator's
    // CHECKS_ALLOW_PRIVATE, and the name is looked up again now (it may resolve elsewhere than when it was
    // checked). A refused address is a permanent failure (errorResult), so it is not retried.
    const result = sub.kind === 'email'
      ? await sendMail(sub.target, ctx, {
        subject: `[${sub.name}] ${t(message.subjectKey, { title: message.title })}`,
        text: [message.text, '', t('mail.view', { url: pageUrl }), t('mail.unsubscribe', { url: leave })].join('\n'),
        headers: { 'Auto-Submitted': 'auto-generated', 'List-Unsubscribe': `<${leave}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click', 'List-Id': `<${sub.slug}.status.vigil>` },
      })
      : await postForResult(hook!, {
        type: message.event, page: { id: sub.page_id, name: sub.name, url: pageUrl }, title: message.title, text: message.text, at: message.at,
        incident: message.incident ?? null, maintenance: message.maintenance ?? null, unsubscribeUrl: leave,
      }, { ctx: { ...ctx, net: STRICT_POLICY }, headers: { 'User-Agent': 'Vigil-Status/1' } });
    if (result.delivered || result.permanent || helpers.job.attempts >= helpers.job.max_attempts) return;
    throw new Error(result.error ?? 'delivery failed');
  };
}
