/**
 * Traffic alerting (docs/analytics.md, "Traffic alerting"): a few minutes
 * after each hour ends, every site's pageviews in that hour are judged
 * against its usual for that hour of the week. A site whose traffic drops
 * below half of usual turns `trafficAlerting` on and opens an incident of
 * the site (monitor_id null, analytics_site_id set, cause `traffic_drop`)
 * that pages the site's channels; the first judged hour back at half of
 * usual or more turns it off and resolves the incident, the resolution going
 * where the opening went.
 *
 * Set-wise: a batch of sites is judged in a handful of statements whatever
 * its size, in one transaction that also queues the pages. One worker judges
 * at a time (a transaction-level advisory lock: another worker waits for it,
 * then finds those sites judged), and a site is judged once per hour
 * (`traffic_checked_at` is the end of the last hour judged), so a second
 * round, a second worker or a restart changes nothing.
 */
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import type { Logger } from '../log';
import { startLoop } from '../jobs/loop';
import { addEvents, type IncidentEventInput } from '../incidents/timeline';
import { queueAlertsFor } from '../alerting/dispatch';

/** The default of TRAFFIC_ALERT_MIN_PAGEVIEWS: below this usual (pageviews per hour) a site is never alerted. */
export const TRAFFIC_ALERT_MIN_PAGEVIEWS = 20;
/** A site is low when its hour has fewer than this share of usual. */
export const TRAFFIC_LOW_SHARE = 0.5;
/** How many weeks back "usual" looks (the same hour of the week in each). */
export const USUAL_WEEKS = 4;
/** How long after an hour ends it is judged: the drain moves the hour's last events into the roll-ups meanwhile. */
export const JUDGE_AFTER_MS = 5 * 60_000;
/** How long judging waits for a drain still holding events of the hour before judging anyway. */
export const JUDGE_WAIT_MAX_MS = 30 * 60_000;

const HOUR_MS = 3_600_000;
/** Sites judged per transaction. */
const BATCH = 1000;
/** The advisory lock of a batch of judging: one worker at a time. */
const LOCK = '130195079328358'; // the bytes of 'vigtrf' as a number
const UNRESOLVED = ['open', 'acknowledged', 'suppressed'];

/** One site's verdict on one hour. */
export interface TrafficVerdict {
  siteId: string;
  domain: string;
  /** Start of the hour judged. */
  hour: Date;
  pageviews: number;
  /** The median of the same hour of the week over the weeks before (a week without data is 0). */
  usual: number;
  alerting: boolean;
  /** The incident this verdict opened, or null. */
  opened: string | null;
  /** The incident this verdict resolved, or null (also when it was already resolved by hand). */
  resolved: string | null;
}

/** The start of the hour judged at `now`: the last hour that ended at least JUDGE_AFTER_MS ago. */
export function judgedHour(now: Date): Date {
  return new Date(Math.floor((now.getTime() - JUDGE_AFTER_MS) / HOUR_MS) * HOUR_MS - HOUR_MS);
}

/** Whether an hour with `pageviews` is a drop against `usual`: below half of it, and only when usual is at least `minPageviews`. */
export function isTrafficLow(pageviews: number, usual: number, minPageviews = TRAFFIC_ALERT_MIN_PAGEVIEWS): boolean {
  return usual >= minPageviews && pageviews < usual * TRAFFIC_LOW_SHARE;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const hhmm = (d: Date) => d.toISOString().slice(11, 16);

/** "Traffic drop on shop.example: 12 pageviews, usually 140" (the incident's title). */
export function trafficDropTitle(domain: string, pageviews: number, usual: number): string {
  return `Traffic drop on ${domain}: ${plural(pageviews, 'pageview')}, usually ${Math.round(usual)}`;
}

/** "12 pageviews from 14:00 to 15:00 UTC, usually 140" (the words of a timeline entry and of the page). */
function hourWords(pageviews: number, usual: number, hour: Date): string {
  return `${plural(pageviews, 'pageview')} from ${hhmm(hour)} to ${hhmm(new Date(hour.getTime() + HOUR_MS))} UTC, usually ${Math.round(usual)}`;
}

/** Whether the ingestion buffer still holds events from before `end` (the drain is behind). */
async function drainBehind(db: Db, end: Date): Promise<boolean> {
  const oldest = await db.selectFrom('analytics_buffer').select('at').orderBy('seq').limit(1).executeTakeFirst();
  return !!oldest && oldest.at < end;
}

interface Row {
  id: string; organization_id: string; workspace_id: string; domain: string;
  traffic_alerting: boolean; traffic_incident_id: string | null; pageviews: number; usual: number;
}

/**
 * Judges the last completed hour (see judgedHour) for every site not yet
 * judged on it, at `now`; returns the verdicts (none for sites another
 * worker judged first; none at all while the drain still holds events of the
 * hour, for up to JUDGE_WAIT_MAX_MS after it ended).
 */
export async function judgeTraffic(db: Db, now = new Date(), o: { minPageviews?: number } = {}): Promise<TrafficVerdict[]> {
  const min = o.minPageviews ?? TRAFFIC_ALERT_MIN_PAGEVIEWS;
  const hour = judgedHour(now);
  const end = new Date(hour.getTime() + HOUR_MS);
  if (now.getTime() < end.getTime() + JUDGE_WAIT_MAX_MS && await drainBehind(db, end)) return [];
  const verdicts: TrafficVerdict[] = [];
  for (;;) {
    const batch = await db.transaction().execute((tx) => judgeBatch(tx, hour, min));
    verdicts.push(...batch);
    if (batch.length < BATCH) break;
  }
  return verdicts;
}

/** One transaction: up to BATCH sites not yet judged on `hour`. */
async function judgeBatch(tx: Db, hour: Date, min: number): Promise<TrafficVerdict[]> {
  const end = new Date(hour.getTime() + HOUR_MS);
  await sql`select pg_advisory_xact_lock(${LOCK}::bigint)`.execute(tx);
  // Pageviews of the hour (n = 0) and of the same hour 1..USUAL_WEEKS weeks before (exactly 168 h apart,
  // whatever the session's time zone), from the totals rows; a missing row is 0.
  const { rows } = await sql<Row>`
    with due as (
      select id, organization_id, workspace_id, domain, traffic_alerting, traffic_incident_id from analytics_sites
      where traffic_checked_at is null or traffic_checked_at < ${end}
      order by id limit ${BATCH}
      for no key update
    ), counts as (
      select d.id, w.n, coalesce(h.pageviews, 0) as pv
      from due d cross join generate_series(0, ${USUAL_WEEKS}) as w(n)
      left join analytics_hourly h on h.site_id = d.id and h.dimension = '' and h.value = ''
        and h.hour = ${hour}::timestamptz - make_interval(hours => 168 * w.n)
    ), judged as (
      select id, (max(pv) filter (where n = 0))::int as pageviews,
        percentile_cont(0.5) within group (order by pv) filter (where n > 0) as usual
      from counts group by id
    )
    select d.id, d.organization_id, d.workspace_id, d.domain, d.traffic_alerting, d.traffic_incident_id, j.pageviews, j.usual
    from due d join judged j using (id) order by d.id`.execute(tx);
  if (rows.length === 0) return [];

  const verdicts: TrafficVerdict[] = rows.map((r) => ({
    siteId: r.id, domain: r.domain, hour, pageviews: Number(r.pageviews), usual: Number(r.usual),
    alerting: isTrafficLow(Number(r.pageviews), Number(r.usual), min), opened: null, resolved: null,
  }));
  const events: IncidentEventInput[] = [];
  const incidentOf = new Map<string, string | null>(rows.map((r) => [r.id, r.traffic_incident_id]));

  // Turning true: an incident of the site, open from the start of the hour.
  const created = rows.flatMap((r, i) => {
    const v = verdicts[i];
    if (!v.alerting || r.traffic_alerting) return [];
    v.opened = newId('inc');
    incidentOf.set(r.id, v.opened);
    events.push({ incidentId: v.opened, organizationId: r.organization_id, kind: 'opened', at: hour, message: hourWords(v.pageviews, v.usual, hour), fromStatus: null, toStatus: 'open' });
    return [{
      id: v.opened, organization_id: r.organization_id, workspace_id: r.workspace_id, monitor_id: null, analytics_site_id: r.id,
      title: trafficDropTitle(r.domain, v.pageviews, v.usual), cause: 'traffic_drop', severity: 'major', status: 'open', root_incident_id: null, started_at: hour,
    }];
  });
  if (created.length) await tx.insertInto('incidents').values(created).execute();

  // Turning false: its incident resolved at the start of the hour back to usual, unless a person resolved it already.
  const ending = rows.filter((r, i) => r.traffic_alerting && !verdicts[i].alerting);
  for (const r of ending) incidentOf.set(r.id, null);
  const endingIds = ending.flatMap((r) => (r.traffic_incident_id ? [r.traffic_incident_id] : []));
  const { rows: resolved } = endingIds.length === 0 ? { rows: [] } : await sql<{ id: string; organization_id: string; was: string; site_id: string }>`
    with ended as (
      select id, status as was from incidents where id = any(${sql.val(endingIds)}::text[]) and status = any(${sql.val(UNRESOLVED)}::text[]) for update
    )
    update incidents i set status = 'resolved', resolved_at = ${hour} from ended where i.id = ended.id
    returning i.id, i.organization_id, ended.was, i.analytics_site_id as site_id`.execute(tx);
  const verdictOf = new Map(verdicts.map((v) => [v.siteId, v]));
  for (const r of resolved) {
    const v = verdictOf.get(r.site_id)!;
    v.resolved = r.id;
    events.push({ incidentId: r.id, organizationId: r.organization_id, kind: 'resolved', at: hour,
      message: `Traffic back to usual on ${v.domain}: ${hourWords(v.pageviews, v.usual, hour)}`, fromStatus: r.was, toStatus: 'resolved' });
  }

  await addEvents(tx, events);
  await queueAlertsFor(tx, created.map((c) => ({ id: c.id, organization_id: c.organization_id, monitor_id: null, analytics_site_id: c.analytics_site_id, status: 'open' })), 'incident.opened');
  await queueAlertsFor(tx, resolved.map((r) => ({ id: r.id, organization_id: r.organization_id, monitor_id: null, analytics_site_id: r.site_id, status: 'resolved' })), 'incident.resolved');
  await sql`update analytics_sites s set traffic_alerting = v.alerting, traffic_checked_at = ${end}, traffic_incident_id = v.incident_id
    from jsonb_to_recordset(${JSON.stringify(verdicts.map((v) => ({ id: v.siteId, alerting: v.alerting, incident_id: incidentOf.get(v.siteId) ?? null })))}::jsonb)
      as v(id text, alerting boolean, incident_id text)
    where s.id = v.id`.execute(tx);
  return verdicts;
}

/**
 * Judges traffic in the background every `pollMs` (default a minute; a site
 * is judged once per hour, JUDGE_AFTER_MS after it ends). Any number of
 * workers may run it: each site is judged by one of them.
 */
export function startTrafficJudge(db: Db, log: Logger, o: { minPageviews?: number; pollMs?: number } = {}): { stop(): Promise<void> } {
  const tlog = log.child({ component: 'traffic' });
  const pollMs = o.pollMs ?? 60_000;
  return startLoop({
    name: 'judging traffic', log: tlog, pollMs, retryMs: pollMs,
    run: async () => {
      const verdicts = await judgeTraffic(db, new Date(), { minPageviews: o.minPageviews });
      const opened = verdicts.filter((v) => v.opened).length;
      const resolved = verdicts.filter((v) => v.resolved).length;
      if (opened || resolved) tlog.info('traffic judged', { sites: verdicts.length, opened, resolved });
      return 0; // judged once per poll, whatever it found
    },
  });
}
