import { randomBytes } from 'node:crypto';
import { isTrafficLow, judgedHour, judgeTraffic, trafficDropTitle, type TrafficVerdict } from '../src/analytics/traffic';
import type { AlertIncident } from '../src/alerting/channels/channel';
import { alertText, alertTitle, incidentFacts } from '../src/alerting/channels/text';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';

// Traffic alerting (docs/analytics.md) on synthetic history: four weeks of
// hourly totals written straight into analytics_hourly, then the judge run at
// chosen times. A drop below half of usual opens one incident of the site
// that pages the site's channels; the next hour back at usual resolves it and
// the resolution goes where the opening went. Small sites never alert;
// missing weeks count as zero; a person can acknowledge and resolve a
// traffic incident like any other.
//
// The synthetic hours lie in 2031, ahead of the clock: the server's own
// judge (it runs every minute with the real time) never reaches them, and
// once a site is judged on a 2031 hour it is done for the real hours.

const HOUR = 3_600_000;
const WEEK = 168 * HOUR;
/** The first hour judged: a Monday, 10:00 UTC. */
const T = Date.parse('2031-03-03T10:00:00Z');
/** A moment at which hour `h` (a start, ms) is the one judged. */
const judgedAt = (h: number) => new Date(h + HOUR + 10 * 60_000);

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;
let receiver: HttpReceiver;

async function site(domain: string): Promise<string> {
  const id = `site_${domain.replace(/\W/g, '_')}`;
  await server.db.insertInto('analytics_sites').values({
    id, organization_id: org.organizationId, workspace_id: org.workspaceId, name: domain, domain, public_id: randomBytes(8).toString('hex'),
  }).execute();
  return id;
}

/** The totals row (dimension '' value '') of one hour. */
async function hour(siteId: string, at: number, pageviews: number) {
  await server.db.insertInto('analytics_hourly').values({ site_id: siteId, hour: new Date(at), dimension: '', value: '', pageviews, visitors: Math.ceil(pageviews / 3), visits: Math.ceil(pageviews / 2) })
    .onConflict((oc) => oc.columns(['site_id', 'dimension', 'hour', 'value']).doUpdateSet({ pageviews })).execute();
}

/** The same hour of the week 1..4 weeks before `at`, one value per week (week 1 first; undefined leaves the week without data). */
async function history(siteId: string, at: number, weeks: (number | undefined)[]) {
  for (const [i, pv] of weeks.entries()) if (pv !== undefined) await hour(siteId, at - (i + 1) * WEEK, pv);
}

async function webhook(name: string) {
  return ok('createChannel', await api.post('/channels', { kind: 'webhook', name, target: `${receiver.url}/${name}`, workspaceId: org.workspaceId }), 201) as { id: string };
}
const hits = (name: string) => receiver.requests.filter((r) => r.path === `/${name}`).map((r) => r.json);

async function siteState(id: string) {
  return server.db.selectFrom('analytics_sites').select(['traffic_alerting', 'traffic_checked_at', 'traffic_incident_id']).where('id', '=', id).executeTakeFirstOrThrow();
}
async function incidentsOf(siteId: string) {
  return server.db.selectFrom('incidents').selectAll().where('analytics_site_id', '=', siteId).orderBy('started_at').execute();
}
const verdictOf = (vs: TrafficVerdict[], siteId: string) => vs.find((v) => v.siteId === siteId);

beforeAll(async () => {
  receiver = await startHttpReceiver();
  server = await startTestServer({ WORKER: 'true', MASTER_KEY: randomBytes(32).toString('base64'), RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

test('the rule: below half of a usual of at least the minimum; the hour judged ends at least five minutes before', () => {
  expect(isTrafficLow(42, 140)).toBe(true);
  expect(isTrafficLow(70, 140)).toBe(false); // exactly half is not below it
  expect(isTrafficLow(69, 140)).toBe(true);
  expect(isTrafficLow(0, 19.5)).toBe(false); // usual under TRAFFIC_ALERT_MIN_PAGEVIEWS (20)
  expect(isTrafficLow(0, 20)).toBe(true);
  expect(isTrafficLow(0, 19.5, 10)).toBe(true);
  expect(judgedHour(new Date('2031-03-03T11:05:00Z')).toISOString()).toBe('2031-03-03T10:00:00.000Z');
  expect(judgedHour(new Date('2031-03-03T11:04:59Z')).toISOString()).toBe('2031-03-03T09:00:00.000Z');
  expect(trafficDropTitle('shop.example', 1, 139.6)).toBe('Traffic drop on shop.example: 1 pageview, usually 140');
});

test('a drop opens one incident that pages the site\'s channel; the same hour again changes nothing; traffic back resolves it and the resolution is delivered', async () => {
  const shop = await site('shop.example');
  const tiny = await site('tiny.example');
  const hook = await webhook('shop');
  ok('setAnalyticsSiteChannels', await api.put(`/analytics/${shop}/channels`, { channelIds: [hook.id] }));
  // Usual for 10:00, 11:00 and 12:00 on Mondays: the median of 120, 135, 145, 160 = 140. The tiny site: 10 (below the minimum).
  for (const h of [T, T + HOUR, T + 2 * HOUR]) {
    await history(shop, h, [120, 160, 135, 145]);
    await history(tiny, h, [9, 11, 10, 10]);
  }
  await hour(shop, T, 150);
  await hour(shop, T + HOUR, 42); // 30 % of usual
  await hour(shop, T + 2 * HOUR, 138);
  // tiny.example has nothing at all on those hours: 0 of a usual of 10.

  // A normal hour.
  let verdicts = await judgeTraffic(server.db, judgedAt(T));
  expect(verdictOf(verdicts, shop)).toMatchObject({ hour: new Date(T), pageviews: 150, usual: 140, alerting: false, opened: null, resolved: null });
  expect(verdictOf(verdicts, tiny)).toMatchObject({ pageviews: 0, usual: 10, alerting: false });
  expect(await siteState(shop)).toEqual({ traffic_alerting: false, traffic_checked_at: new Date(T + HOUR), traffic_incident_id: null });
  expect(await incidentsOf(shop)).toEqual([]);

  // 42 pageviews, usually 140: judged by two workers at once, one incident.
  const [a, b] = await Promise.all([judgeTraffic(server.db, judgedAt(T + HOUR)), judgeTraffic(server.db, judgedAt(T + HOUR))]);
  verdicts = [...a, ...b];
  expect(verdicts.filter((v) => v.siteId === shop)).toEqual([expect.objectContaining({ pageviews: 42, usual: 140, alerting: true, opened: expect.any(String) })]);
  expect(verdictOf(verdicts, tiny)).toMatchObject({ alerting: false });
  const [incident] = await incidentsOf(shop);
  expect(await incidentsOf(shop)).toHaveLength(1);
  expect(incident).toMatchObject({
    monitor_id: null, analytics_site_id: shop, workspace_id: org.workspaceId, cause: 'traffic_drop', status: 'open', severity: 'major',
    title: 'Traffic drop on shop.example: 42 pageviews, usually 140', started_at: new Date(T + HOUR), resolved_at: null,
  });
  expect(await siteState(shop)).toEqual({ traffic_alerting: true, traffic_checked_at: new Date(T + 2 * HOUR), traffic_incident_id: incident.id });
  const [opened] = await until('the opening page', async () => (hits('shop').length >= 1 ? hits('shop') : null));
  expect(opened).toMatchObject({
    event: 'incident.opened',
    text: '📉 Traffic drop on shop.example: 42 pageviews from 11:00 to 12:00 UTC, usually 140',
    incident: { id: incident.id, cause: 'traffic_drop', monitorId: shop, monitorName: 'shop.example', status: 'open', startedAt: new Date(T + HOUR).toISOString() },
  });

  // While it lasts the site reads as alerting, and the incident is listed as the site's.
  const sites = ok('listAnalyticsSites', await api.get('/analytics'));
  expect(sites.find((s: { id: string }) => s.id === shop)).toMatchObject({ trafficAlerting: true });
  expect(sites.find((s: { id: string }) => s.id === tiny)).toMatchObject({ trafficAlerting: false });
  const listed = ok('listIncidents', await api.get('/incidents?open=true'));
  expect(listed).toEqual([expect.objectContaining({
    id: incident.id, monitorId: shop, monitorName: 'shop.example', analyticsSiteId: shop, cause: 'traffic_drop', status: 'open',
    title: 'Traffic drop on shop.example: 42 pageviews, usually 140', resolvedAt: null,
  })]);

  // The same hour again (later, and by the loop's every-minute rounds): nothing new.
  expect(await judgeTraffic(server.db, judgedAt(T + HOUR))).toEqual([]);
  expect(await judgeTraffic(server.db, new Date(T + 2 * HOUR + 50 * 60_000))).toEqual([]);
  expect(await incidentsOf(shop)).toHaveLength(1);
  const pages = await server.db.selectFrom('deliveries').select('event').where('incident_id', '=', incident.id).execute();
  expect(pages).toEqual([{ event: 'incident.opened' }]);

  // Back to usual: resolved as of the start of that hour, and the resolution goes where the opening went.
  verdicts = await judgeTraffic(server.db, judgedAt(T + 2 * HOUR));
  expect(verdictOf(verdicts, shop)).toMatchObject({ pageviews: 138, usual: 140, alerting: false, opened: null, resolved: incident.id });
  expect(await siteState(shop)).toEqual({ traffic_alerting: false, traffic_checked_at: new Date(T + 3 * HOUR), traffic_incident_id: null });
  const resolvedPage = await until('the resolution page', async () => hits('shop')[1]);
  expect(resolvedPage).toMatchObject({
    event: 'incident.resolved', text: '📈 Traffic back to usual on shop.example after 1h',
    incident: { id: incident.id, status: 'resolved', resolvedAt: new Date(T + 2 * HOUR).toISOString() },
  });
  const read = ok('getIncident', await api.get(`/incidents/${incident.id}`));
  expect(read).toMatchObject({ status: 'resolved', durationSeconds: 3600, analyticsSiteId: shop, monitorId: shop, monitorName: 'shop.example', workspaceId: org.workspaceId });
  const timeline = await until('both notifications on the timeline', async () => {
    const t = ok('listIncidentEvents', await api.get(`/incidents/${incident.id}/events`)) as { kind: string; message: string | null }[];
    return t.filter((e) => e.kind === 'notification').length === 2 ? t : null;
  });
  expect(timeline.filter((e) => e.kind !== 'notification')).toEqual([
    expect.objectContaining({ kind: 'opened', message: '42 pageviews from 11:00 to 12:00 UTC, usually 140', toStatus: 'open' }),
    expect.objectContaining({ kind: 'resolved', message: 'Traffic back to usual on shop.example: 138 pageviews from 12:00 to 13:00 UTC, usually 140', fromStatus: 'open', toStatus: 'resolved' }),
  ]);
  expect(ok('listAnalyticsSites', await api.get('/analytics')).find((s: { id: string }) => s.id === shop)).toMatchObject({ trafficAlerting: false });

  // The small site never alerted, nor opened anything.
  expect(await siteState(tiny)).toMatchObject({ traffic_alerting: false });
  expect(await incidentsOf(tiny)).toEqual([]);
});

test('missing weeks count as zero: two weeks of data halve usual, one week leaves it under the minimum', async () => {
  const h = T + 24 * WEEK; // hours of their own, ahead of the other tests'
  const young = await site('young.example');
  const newborn = await site('newborn.example');
  await history(young, h, [200, 200, undefined, undefined]); // 0, 0, 200, 200: usual 100
  await history(newborn, h, [500, undefined, undefined, undefined]); // 0, 0, 0, 500: usual 0
  await hour(young, h, 45);
  const verdicts = await judgeTraffic(server.db, judgedAt(h));
  expect(verdictOf(verdicts, young)).toMatchObject({ pageviews: 45, usual: 100, alerting: true, opened: expect.any(String) });
  expect(verdictOf(verdicts, newborn)).toMatchObject({ pageviews: 0, usual: 0, alerting: false, opened: null });
  expect(await incidentsOf(newborn)).toEqual([]);
  // No channel attached: the incident is there, and pages nobody.
  const [incident] = await incidentsOf(young);
  expect(incident).toMatchObject({ title: 'Traffic drop on young.example: 45 pageviews, usually 100', status: 'open' });
  expect(await server.db.selectFrom('deliveries').select('id').where('incident_id', '=', incident.id).execute()).toEqual([]);
});

test('a person acknowledges and resolves a traffic incident; while traffic stays low nothing reopens, and its return pages nobody again', async () => {
  const h = T + 48 * WEEK;
  const blog = await site('blog.example');
  const hook = await webhook('blog');
  ok('setAnalyticsSiteChannels', await api.put(`/analytics/${blog}/channels`, { channelIds: [hook.id] }));
  for (const x of [h, h + HOUR, h + 2 * HOUR]) await history(blog, x, [80, 80, 80, 80]);
  await hour(blog, h, 10);
  await hour(blog, h + HOUR, 12);
  await hour(blog, h + 2 * HOUR, 90);

  const [opened] = (await judgeTraffic(server.db, judgedAt(h))).filter((v) => v.siteId === blog);
  expect(opened).toMatchObject({ alerting: true, opened: expect.any(String) });
  const id = opened.opened!;
  await until('the opening page', async () => hits('blog').length === 1);
  expect(ok('updateIncident', await api.patch(`/incidents/${id}`, { status: 'acknowledged' }))).toMatchObject({ status: 'acknowledged', analyticsSiteId: blog });
  const ack = await until('the acknowledgement page', async () => hits('blog')[1]);
  expect(ack).toMatchObject({ event: 'incident.acknowledged', incident: { id, monitorName: 'blog.example' } });
  expect(ack.text).toMatch(/^👀 Traffic drop on blog\.example acknowledged by /);
  expect(ok('updateIncident', await api.patch(`/incidents/${id}`, { status: 'resolved' }))).toMatchObject({ status: 'resolved' });
  const resolvedByHand = await until('the resolution page', async () => hits('blog')[2]);
  expect(resolvedByHand).toMatchObject({ event: 'incident.resolved', incident: { id, status: 'resolved' } });
  expect(resolvedByHand.text).toMatch(/^📈 Traffic back to usual on blog\.example after /);

  // Still low the next hour: the same episode, no new incident.
  expect((await judgeTraffic(server.db, judgedAt(h + HOUR))).find((v) => v.siteId === blog)).toMatchObject({ alerting: true, opened: null, resolved: null });
  expect(await siteState(blog)).toMatchObject({ traffic_alerting: true, traffic_incident_id: id });
  // Back to usual: alerting ends; the incident a person resolved stays as it was, and nobody is paged again.
  expect((await judgeTraffic(server.db, judgedAt(h + 2 * HOUR))).find((v) => v.siteId === blog)).toMatchObject({ alerting: false, opened: null, resolved: null });
  expect(await siteState(blog)).toMatchObject({ traffic_alerting: false, traffic_incident_id: null });
  expect(await incidentsOf(blog)).toEqual([expect.objectContaining({ id, status: 'resolved' })]);
  await new Promise((r) => setTimeout(r, 1500));
  expect(hits('blog').map((p) => p.event)).toEqual(['incident.opened', 'incident.acknowledged', 'incident.resolved']);
});

test('the words of a traffic alert', () => {
  const incident: AlertIncident = {
    id: 'inc_1', title: 'Traffic drop on shop.example: 42 pageviews, usually 140', cause: 'traffic_drop', severity: 'major', status: 'open',
    monitorId: 'site_1', monitorName: 'shop.example', startedAt: '2031-03-03T11:00:00.000Z', acknowledgedAt: null, resolvedAt: null,
  };
  const now = new Date('2031-03-03T12:40:00Z');
  expect(alertText('incident.opened', incident, { detail: '42 pageviews from 11:00 to 12:00 UTC, usually 140' }, now))
    .toBe('📉 Traffic drop on shop.example: 42 pageviews from 11:00 to 12:00 UTC, usually 140');
  expect(alertText('incident.acknowledged', incident, { actor: 'Ada' }, now)).toBe('👀 Traffic drop on shop.example acknowledged by Ada');
  expect(alertText('incident.resolved', { ...incident, status: 'resolved', resolvedAt: '2031-03-03T13:00:00.000Z' }, {}, now))
    .toBe('📈 Traffic back to usual on shop.example after 2h');
  const message = (event: 'incident.opened' | 'incident.resolved') => ({ id: 'dlv_1', event, incident, errorIssue: null, text: '', occurredAt: now.toISOString() });
  expect(alertTitle(message('incident.opened'))).toBe('Traffic drop on shop.example');
  expect(alertTitle(message('incident.resolved'))).toBe('Traffic back to usual on shop.example');
  expect(incidentFacts(incident)[0]).toEqual(['Site', 'shop.example']);
});
