import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AnalyticsService } from '../gen/proto/vigil/v1/analytics_pb';
import { PROP_SEPARATOR } from '../src/analytics/count';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// Analytics sites through the API: their CRUD with a domain unique on the
// server, tenancy and permissions, the channels a traffic drop pages, and the
// figures of GET /analytics/{id}, read from roll-up rows this file writes
// straight into the database (as the drain would).

const BASE_URL = 'https://vigil.example.test/base';
let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;

beforeAll(async () => {
  server = await startTestServer({ BASE_URL, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
});
afterAll(() => server.close());

type Site = { id: string; publicId: string; domain: string; name: string; workspaceId: string; scriptTag: string };
let n = 0;
async function site(client = api, workspaceId = org.workspaceId, domain = `site${++n}.example.com`): Promise<Site> {
  return ok('createAnalyticsSite', await client.post('/analytics', { domain, workspaceId }), 201);
}

/** `YYYY-MM-DD` of today (UTC) plus `offset` days. */
function day(offset = 0): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + offset)).toISOString().slice(0, 10);
}

type Counts = Partial<Record<'visitors' | 'pageviews' | 'events' | 'visits' | 'bounces' | 'duration_s', number>>;
/** Daily roll-up rows: `[day offset, dimension, value, counts]`, added to their months' rows as the drain does. */
async function daily(siteId: string, rows: [number, string, string, Counts][]) {
  const values = rows.map(([offset, dimension, value, c]) => ({ site_id: siteId, day: day(offset), dimension, value, ...c }));
  await server.db.insertInto('analytics_daily').values(values).execute();
  for (const { day: d, ...v } of values) {
    await server.db.insertInto('analytics_monthly').values({ ...v, month: `${d.slice(0, 7)}-01` })
      .onConflict((oc) => oc.columns(['site_id', 'dimension', 'month', 'value']).doUpdateSet((eb) => ({
        visitors: eb('analytics_monthly.visitors', '+', eb.ref('excluded.visitors')),
        pageviews: eb('analytics_monthly.pageviews', '+', eb.ref('excluded.pageviews')),
        events: eb('analytics_monthly.events', '+', eb.ref('excluded.events')),
        visits: eb('analytics_monthly.visits', '+', eb.ref('excluded.visits')),
        bounces: eb('analytics_monthly.bounces', '+', eb.ref('excluded.bounces')),
        duration_s: eb('analytics_monthly.duration_s', '+', eb.ref('excluded.duration_s')),
      }))).execute();
  }
}
const report = (id: string, query = '') => api.get(`/analytics/${id}${query}`);

describe('sites', () => {
  test('create normalises the domain, defaults the name, and answers the public id and the script tag', async () => {
    const s = ok('createAnalyticsSite', await api.post('/analytics', { domain: '  WWW.Shop.Example.COM. ', workspaceId: org.workspaceId }), 201);
    expect(s).toMatchObject({ domain: 'shop.example.com', name: 'shop.example.com', workspaceId: org.workspaceId, viewsLast24h: 0, trafficAlerting: false });
    expect(s.publicId).toMatch(/^[0-9A-Za-z]{16}$/);
    expect(s.scriptTag).toBe(`<script defer data-site="${s.publicId}" src="${BASE_URL}/js/script.js"></script>`);
    const named = ok('createAnalyticsSite', await api.post('/analytics', { domain: 'bücher.example', workspaceId: org.workspaceId, name: ' Books ' }), 201);
    expect(named).toMatchObject({ domain: 'xn--bcher-kva.example', name: 'Books' });
    expect(named.publicId).not.toBe(s.publicId);

    const listed = ok('listAnalyticsSites', await api.get('/analytics'));
    expect(listed.find((x: Site) => x.id === s.id)).toEqual(s);
    const domains = listed.map((x: Site) => x.domain);
    expect(domains).toEqual([...domains].sort());
    expect(ok('getAnalyticsSite', await report(s.id))).toMatchObject({ ...s, days: 7 });
  });

  test('a domain must be a bare host name', async () => {
    for (const domain of ['https://example.com', 'example.com/blog', 'example.com:8080', 'user@example.com', 'localhost', 'www.', '-bad-.example.com',
      'exa mple.com', 'a..example.com', 'under_score.example.com', `${'a'.repeat(64)}.example.com`, '', '   ']) {
      const res = await api.post('/analytics', { domain, workspaceId: org.workspaceId });
      expect({ domain, status: res.status, field: res.body.details?.field }).toEqual({ domain, status: 400, field: 'domain' });
    }
    const s = await site();
    const bad = await api.patch(`/analytics/${s.id}`, { domain: 'http://x.example.com/' });
    expect({ status: bad.status, field: bad.body.details.field }).toEqual({ status: 400, field: 'domain' });
    expect((await api.patch(`/analytics/${s.id}`, {})).status).toBe(400);
    expect((await api.patch(`/analytics/${s.id}`, { name: '  ' })).body.details.field).toBe('name');
    expect((await api.post('/analytics', { domain: 'nows.example.com', workspaceId: 'ws_nope' })).status).toBe(404);
  });

  test('a domain is measured by one site on the server: 409 domain_taken, whichever organisation has it', async () => {
    const first = await site(api, org.workspaceId, 'taken.example.org');
    const other = await server.org();
    for (const [client, ws, domain] of [[api, org.workspaceId, 'taken.example.org'], [server.api(other.apiKey), other.workspaceId, 'WWW.taken.example.org']] as const) {
      const res = await client.post('/analytics', { domain, workspaceId: ws });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'domain_taken', details: { field: 'domain' } });
    }
    const second = await site();
    expect((await api.patch(`/analytics/${second.id}`, { domain: 'www.taken.example.org' })).body.code).toBe('domain_taken');
    // Setting a site's own domain again is no conflict.
    expect(ok('updateAnalyticsSite', await api.patch(`/analytics/${first.id}`, { domain: 'taken.example.org', name: 'Taken' }))).toMatchObject({ name: 'Taken' });
  });

  test('update renames and moves the domain, keeping the public id; delete takes the figures with it; both audited', async () => {
    const s = await site();
    const moved = ok('updateAnalyticsSite', await api.patch(`/analytics/${s.id}`, { domain: 'moved.example.com', name: 'Moved' }));
    expect(moved).toMatchObject({ id: s.id, publicId: s.publicId, domain: 'moved.example.com', name: 'Moved' });

    await daily(s.id, [[0, '', '', { pageviews: 3 }]]);
    await server.db.insertInto('analytics_hourly').values({ site_id: s.id, hour: new Date(), dimension: '', value: '', pageviews: 3 }).execute();
    await server.db.insertInto('analytics_buffer').values({ site_id: s.id, at: new Date(), name: 'pageview', pathname: '/', hostname: 'moved.example.com', referrer: null,
      referrer_source: null, country: null, browser: null, os: null, device: null, utm_source: null, utm_medium: null, utm_campaign: null, props: null,
      visitor: '42', interactive: true }).execute();
    const removed = ok('deleteAnalyticsSite', await api.delete(`/analytics/${s.id}`));
    expect(removed).toEqual({ id: s.id, deleted: true });
    expect((await report(s.id)).status).toBe(404);
    expect((await api.delete(`/analytics/${s.id}`)).status).toBe(404);
    expect(await server.db.selectFrom('analytics_daily').select('site_id').where('site_id', '=', s.id).execute()).toEqual([]);
    expect(await server.db.selectFrom('analytics_hourly').select('site_id').where('site_id', '=', s.id).execute()).toEqual([]);
    expect(await server.db.selectFrom('analytics_buffer').select('site_id').where('site_id', '=', s.id).execute()).toEqual([]);
    // The domain is free again.
    await site(api, org.workspaceId, 'moved.example.com');

    const entries = await server.db.selectFrom('audit_log').select(['action', 'changes']).where('resource_id', '=', s.id).orderBy('seq').execute();
    expect(entries.map((e) => e.action)).toEqual(['analytics_site.created', 'analytics_site.updated', 'analytics_site.deleted']);
    expect(entries[1].changes).toEqual({ name: { from: s.domain, to: 'Moved' }, domain: { from: s.domain, to: 'moved.example.com' } });
  });

  test('views of the last 24 hours come from the hourly totals; trafficAlerting from the site', async () => {
    const s = await site();
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const ago = (h: number) => new Date(hour.getTime() - h * 3_600_000);
    await server.db.insertInto('analytics_hourly').values([
      { site_id: s.id, hour, dimension: '', value: '', pageviews: 5 },
      { site_id: s.id, hour: ago(23), dimension: '', value: '', pageviews: 7 },
      { site_id: s.id, hour: ago(24), dimension: '', value: '', pageviews: 100 },
      { site_id: s.id, hour, dimension: 'path', value: '/', pageviews: 5 },
    ]).execute();
    await server.db.updateTable('analytics_sites').set({ traffic_alerting: true }).where('id', '=', s.id).execute();
    expect(ok('listAnalyticsSites', await api.get('/analytics')).find((x: Site) => x.id === s.id)).toMatchObject({ viewsLast24h: 12, trafficAlerting: true });
    expect(ok('getAnalyticsSite', await report(s.id))).toMatchObject({ viewsLast24h: 12, trafficAlerting: true });
  });
});

describe('tenancy and permissions', () => {
  test('a confined key sees its workspaces\' sites only; another organisation sees none; viewers read but cannot write', async () => {
    const s = await site();
    const ws2 = ok('createWorkspace', await api.post('/workspaces', { name: 'Client B' }), 201).id;
    const confined = server.api((await server.member(org.organizationId, 'member', [ws2])).apiKey);
    const other = server.api((await server.org()).apiKey);
    for (const client of [confined, other]) {
      expect(ok('listAnalyticsSites', await client.get('/analytics')).map((x: Site) => x.id)).not.toContain(s.id);
      for (const res of [await client.get(`/analytics/${s.id}`), await client.patch(`/analytics/${s.id}`, { name: 'x' }), await client.delete(`/analytics/${s.id}`),
        await client.get(`/analytics/${s.id}/channels`), await client.put(`/analytics/${s.id}/channels`, { channelIds: [] })]) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    }
    // Nor may the confined key create in a workspace outside its confinement.
    expect((await confined.post('/analytics', { domain: 'elsewhere.example.com', workspaceId: org.workspaceId })).status).toBe(404);
    const own = await site(confined, ws2);
    expect(ok('listAnalyticsSites', await confined.get('/analytics')).map((x: Site) => x.id)).toEqual([own.id]);
    expect(ok('listAnalyticsSites', await api.get('/analytics')).map((x: Site) => x.id)).toEqual(expect.arrayContaining([own.id, s.id]));

    const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
    ok('getAnalyticsSite', await viewer.get(`/analytics/${s.id}`));
    for (const [res, permission] of [
      [await viewer.post('/analytics', { domain: 'viewer.example.com', workspaceId: org.workspaceId }), 'monitor:create'],
      [await viewer.patch(`/analytics/${s.id}`, { name: 'x' }), 'monitor:update'],
      [await viewer.delete(`/analytics/${s.id}`), 'monitor:delete'],
      [await viewer.put(`/analytics/${s.id}/channels`, { channelIds: [] }), 'monitor:update'],
    ] as const) {
      expect(res.status).toBe(403);
      expect(res.body.error).toContain(permission);
    }
  });
});

describe('channels', () => {
  const webhook = async (client: ApiClient, name: string, workspaceId: string | null) =>
    ok('createChannel', await client.post('/channels', { kind: 'webhook', name, target: `https://hooks.example.test/${name}`, workspaceId }), 201) as { id: string };

  test('the whole set is replaced; unknown, foreign and other-workspace channels are refused and change nothing; audited', async () => {
    const s = await site();
    const orgWide = await webhook(api, 'wide', null);
    const mine = await webhook(api, 'mine', org.workspaceId);
    expect(ok('listAnalyticsSiteChannels', await api.get(`/analytics/${s.id}/channels`))).toEqual([]);
    const set = ok('setAnalyticsSiteChannels', await api.put(`/analytics/${s.id}/channels`, { channelIds: [mine.id, orgWide.id, mine.id] }));
    expect(set.map((c: { id: string }) => c.id).sort()).toEqual([mine.id, orgWide.id].sort());
    expect(ok('listAnalyticsSiteChannels', await api.get(`/analytics/${s.id}/channels`))).toEqual(set);

    const other = await server.org();
    const foreign = await webhook(server.api(other.apiKey), 'theirs', null);
    const ws2 = ok('createWorkspace', await api.post('/workspaces', { name: 'Client C' }), 201).id;
    const elsewhere = await webhook(api, 'elsewhere', ws2);
    for (const ids of [[orgWide.id, foreign.id], [orgWide.id, elsewhere.id], [orgWide.id, 'chn_nope']]) {
      const refused = await api.put(`/analytics/${s.id}/channels`, { channelIds: ids });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'unknown_channel', details: { field: 'channelIds.1' } });
    }
    expect((await api.put(`/analytics/${s.id}/channels`, {})).status).toBe(400);
    expect(ok('listAnalyticsSiteChannels', await api.get(`/analytics/${s.id}/channels`))).toEqual(set);
    expect((await api.get('/analytics/site_nope/channels')).status).toBe(404);

    expect(ok('setAnalyticsSiteChannels', await api.put(`/analytics/${s.id}/channels`, { channelIds: null }))).toEqual([]);
    const entries = await server.db.selectFrom('audit_log').select('changes').where('resource_id', '=', s.id).where('action', '=', 'analytics_site.channels_set').orderBy('seq').execute();
    expect(entries.map((e) => e.changes)).toEqual([
      { channelIds: { from: [], to: [mine.id, orgWide.id].sort() } },
      { channelIds: { from: [mine.id, orgWide.id].sort(), to: [] } },
    ]);
  });
});

describe('figures', () => {
  test('totals and a series with every day of the window, zeros included; visitors are daily uniques summed', async () => {
    const s = await site();
    await daily(s.id, [
      [0, '', '', { visitors: 10, pageviews: 30, events: 4, visits: 12, bounces: 3, duration_s: 600 }],
      [-2, '', '', { visitors: 5, pageviews: 8, events: 1, visits: 6, bounces: 6, duration_s: 0 }],
      [-6, '', '', { visitors: 1, pageviews: 1, visits: 2, bounces: 1, duration_s: 90 }],
      [-7, '', '', { visitors: 1000, pageviews: 1000, visits: 1000 }], // the day before the default window
      [1, '', '', { visitors: 1000, pageviews: 1000 }], // tomorrow is not in any window
      [0, 'path', '/', { visitors: 999, pageviews: 999 }], // not a totals row
    ]);
    const r = ok('getAnalyticsSite', await report(s.id));
    expect(r).toMatchObject({ days: 7, visitors: 16, dailyUniqueVisitors: 16, pageviews: 39, events: 5, visits: 20, breakdowns: [] });
    expect(r.bounceRate).toBeCloseTo((100 * 10) / 20);
    expect(r.visitDurationSeconds).toBeCloseTo(690 / 20);
    expect(r.series).toEqual([
      { date: day(-6), visitors: 1, pageviews: 1, visits: 2 },
      { date: day(-5), visitors: 0, pageviews: 0, visits: 0 },
      { date: day(-4), visitors: 0, pageviews: 0, visits: 0 },
      { date: day(-3), visitors: 0, pageviews: 0, visits: 0 },
      { date: day(-2), visitors: 5, pageviews: 8, visits: 6 },
      { date: day(-1), visitors: 0, pageviews: 0, visits: 0 },
      { date: day(0), visitors: 10, pageviews: 30, visits: 12 },
    ]);
    expect(r.dailyUniqueVisitors).toBe(r.series.reduce((a: number, d: { visitors: number }) => a + d.visitors, 0));

    const one = ok('getAnalyticsSite', await report(s.id, '?days=1'));
    expect(one).toMatchObject({ days: 1, visitors: 10, pageviews: 30, visits: 12, bounceRate: 25, visitDurationSeconds: 50 });
    const eight = ok('getAnalyticsSite', await report(s.id, '?days=8'));
    expect(eight).toMatchObject({ days: 8, visitors: 1016 });
  });

  test('days is clamped to 1..365, never refused; no visits means null rates', async () => {
    const s = await site();
    await daily(s.id, [[-364, '', '', { visitors: 2, pageviews: 2 }], [-365, '', '', { visitors: 50, pageviews: 50 }]]);
    const year = ok('getAnalyticsSite', await report(s.id, '?days=1000'));
    expect(year).toMatchObject({ days: 365, visitors: 2, visits: 0, bounceRate: null, visitDurationSeconds: null });
    expect(year.series).toHaveLength(365);
    expect(year.series[0]).toEqual({ date: day(-364), visitors: 2, pageviews: 2, visits: 0 });
    expect(year.series[364].date).toBe(day(0));
    for (const q of ['?days=0', '?days=-5']) expect(ok('getAnalyticsSite', await report(s.id, q))).toMatchObject({ days: 1, visitors: 0 });
    expect((await report(s.id, '?days=soon')).status).toBe(400);
  });

  test('breakdowns sum whole months and the days at the window\'s ends: days of a month before the window never count', async () => {
    const s = await site();
    // A window starting on the 8th of last month: its first month is summed as the month less its first seven days.
    const now = new Date();
    const days = Math.round((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 8)) / 86_400_000) + 1;
    await daily(s.id, [
      [-(days - 1), 'path', '/both', { visitors: 3, pageviews: 4, visits: 2, bounces: 1 }],
      [-days, 'path', '/both', { visitors: 100, pageviews: 100, visits: 100 }],
      [-(days + 3), 'path', '/before', { visitors: 500, pageviews: 500 }],
      [-Math.floor(days / 2), 'path', '/middle', { visitors: 7, pageviews: 9 }],
      [0, 'path', '/both', { visitors: 1, pageviews: 1 }],
      [-(days + 40), 'path', '/long-ago', { visitors: 9, pageviews: 9 }],
    ]);
    const rows = ok('getAnalyticsSite', await report(s.id, `?days=${days}&dimensions=path`)).breakdowns[0].rows;
    expect(rows.map((r: { value: string; visitors: number; pageviews: number; visits: number }) => [r.value, r.visitors, r.pageviews, r.visits]))
      .toEqual([['/middle', 7, 9, 0], ['/both', 4, 5, 2]]);
    // The same rows over a longer window take in the days before.
    const wider = ok('getAnalyticsSite', await report(s.id, `?days=${days + 41}&dimensions=path`)).breakdowns[0].rows;
    expect(wider.map((r: { value: string; visitors: number }) => [r.value, r.visitors])).toEqual([['/before', 500], ['/both', 104], ['/long-ago', 9], ['/middle', 7]]);
  });

  test('breakdowns come in the order asked, once each; an unknown dimension is 400 naming it', async () => {
    const s = await site();
    const r = ok('getAnalyticsSite', await report(s.id, '?dimensions=country,%20PATH,event,country,,utm_campaign'));
    expect(r.breakdowns.map((b: { dimension: string }) => b.dimension)).toEqual(['country', 'path', 'event', 'utm_campaign']);
    const all = 'path,referrer,country,browser,os,device,utm_source,utm_medium,utm_campaign,event';
    expect(ok('getAnalyticsSite', await report(s.id, `?days=365&dimensions=${all}`)).breakdowns.map((b: { dimension: string }) => b.dimension)).toEqual(all.split(','));
    const bad = await report(s.id, '?dimensions=path,planet');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'unknown_dimension', vars: { dimension: 'planet' }, details: { field: 'dimensions' } });
    expect(bad.body.error).toContain('planet');
    expect((await report('site_nope', '?dimensions=path')).status).toBe(404);
  });

  test('a breakdown is the top 50 values by visitors summed over the days, then pageviews, with their visits', async () => {
    const s = await site();
    const rows: [number, string, string, Counts][] = [];
    // 60 paths: /p0 … /p59, visitors split over two days; /p48 and /p49 tie on visitors, /p49 has more pageviews.
    for (let i = 0; i < 60; i++) {
      const visitors = i === 49 ? 52 : 100 - i;
      rows.push([0, 'path', `/p${i}`, { visitors: visitors - 1, pageviews: i === 49 ? 40 : 20, visits: 4, bounces: 1, duration_s: 100 }]);
      rows.push([-3, 'path', `/p${i}`, { visitors: 1, pageviews: 1, visits: 0 }]);
    }
    rows.push([-10, 'path', '/old', { visitors: 10_000, pageviews: 10_000 }]); // outside the window
    rows.push([0, 'referrer', '(none)', { visitors: 3, pageviews: 3, visits: 3, bounces: 3 }]);
    rows.push([0, 'device', 'mobile', { visitors: 3, pageviews: 5, visits: 4, bounces: 1, duration_s: 45 }]);
    await daily(s.id, rows);
    const r = ok('getAnalyticsSite', await report(s.id, '?dimensions=path,device,os'));
    const [paths, devices, oses] = r.breakdowns;
    expect(paths.rows).toHaveLength(50);
    expect(paths.rows.slice(0, 2)).toEqual([
      { value: '/p0', visitors: 100, pageviews: 21, visits: 4, bounceRate: 25, visitDurationSeconds: 25 },
      { value: '/p1', visitors: 99, pageviews: 21, visits: 4, bounceRate: 25, visitDurationSeconds: 25 },
    ]);
    expect(paths.rows.map((x: { value: string }) => x.value)).toEqual([...Array.from({ length: 48 }, (_, i) => `/p${i}`), '/p49', '/p48']);
    expect(paths.rows[48]).toMatchObject({ visitors: 52, pageviews: 41 });
    // One day: the other day's visitors are not counted.
    expect(ok('getAnalyticsSite', await report(s.id, '?dimensions=path&days=1')).breakdowns[0].rows[0]).toMatchObject({ value: '/p0', visitors: 99, pageviews: 20 });
    expect(devices.rows).toEqual([{ value: 'mobile', visitors: 3, pageviews: 5, visits: 4, bounceRate: 25, visitDurationSeconds: 11.25 }]);
    expect(oses).toEqual({ dimension: 'os', rows: [] });
  });

  test('the event breakdown counts occurrences and carries each key\'s top values; events have no visits', async () => {
    const s = await site();
    const prop = (event: string, key: string, value: string) => `${event}${PROP_SEPARATOR}${key}${PROP_SEPARATOR}${value}`;
    const rows: [number, string, string, Counts][] = [
      [0, 'event', 'Signup', { visitors: 6, events: 9 }],
      [-1, 'event', 'Signup', { visitors: 2, events: 2 }],
      [0, 'event', 'Download', { visitors: 3, events: 30 }],
      [0, 'prop', prop('Signup', 'plan', 'pro'), { visitors: 4, events: 5 }],
      [-1, 'prop', prop('Signup', 'plan', 'pro'), { visitors: 1, events: 1 }],
      [0, 'prop', prop('Signup', 'plan', 'free'), { visitors: 2, events: 4 }],
      [0, 'prop', prop('Signup', 'from', 'ad'), { visitors: 1, events: 1 }],
      [0, 'prop', prop('Download', 'url', 'https://x.example/a?b=c'), { visitors: 3, events: 30 }],
      [0, 'prop', prop('Gone', 'k', 'v'), { visitors: 3, events: 3 }],
    ];
    // Twelve values of one key: only its ten with the most visitors are kept.
    for (let i = 0; i < 12; i++) rows.push([0, 'prop', prop('Download', 'file', `f${i}.zip`), { visitors: 20 - i, events: 20 - i }]);
    await daily(s.id, rows);
    const [events] = ok('getAnalyticsSite', await report(s.id, '?dimensions=event')).breakdowns;
    expect(events.rows.map((x: { value: string }) => x.value)).toEqual(['Signup', 'Download']);
    const [signup, download] = events.rows;
    expect(signup).toEqual({
      value: 'Signup', visitors: 8, pageviews: 11, visits: null, bounceRate: null, visitDurationSeconds: null,
      props: [
        { key: 'from', value: 'ad', events: 1, visitors: 1 },
        { key: 'plan', value: 'pro', events: 6, visitors: 5 },
        { key: 'plan', value: 'free', events: 4, visitors: 2 },
      ],
    });
    const files = download.props.filter((p: { key: string }) => p.key === 'file');
    expect(files.map((p: { value: string }) => p.value)).toEqual(Array.from({ length: 10 }, (_, i) => `f${i}.zip`));
    expect(download.props.find((p: { key: string }) => p.key === 'url')).toEqual({ key: 'url', value: 'https://x.example/a?b=c', events: 30, visitors: 3 });
    // Only the event breakdown carries props.
    expect(ok('getAnalyticsSite', await report(s.id, '?dimensions=path')).breakdowns[0].rows).toEqual([]);
  });

  test('the same report over Connect (protobuf)', async () => {
    const s = await site();
    await daily(s.id, [
      [0, '', '', { visitors: 4, pageviews: 6, visits: 4, bounces: 1, duration_s: 20 }],
      [0, 'event', 'Signup', { visitors: 1, events: 2 }],
      [0, 'prop', `Signup${PROP_SEPARATOR}plan${PROP_SEPARATOR}pro`, { visitors: 1, events: 2 }],
    ]);
    const client = createClient(AnalyticsService, createConnectTransport({
      baseUrl: `${server.url}/rpc`, httpVersion: '1.1', useBinaryFormat: true,
      interceptors: [(next) => (req) => { req.header.set('authorization', `Bearer ${org.apiKey}`); return next(req); }],
    }));
    const viaConnect = (await client.getAnalyticsSite({ id: s.id, days: 3, dimensions: 'event' })).data!;
    const viaRest = ok('getAnalyticsSite', await report(s.id, '?days=3&dimensions=event'));
    expect(viaConnect).toMatchObject({ id: s.id, publicId: s.publicId, scriptTag: s.scriptTag, days: 3, visitors: 4, pageviews: 6, visits: 4, bounceRate: 25, visitDurationSeconds: 5 });
    expect(viaConnect.series.map((d) => ({ date: d.date, visitors: d.visitors, pageviews: d.pageviews, visits: d.visits }))).toEqual(viaRest.series);
    const row = viaConnect.breakdowns[0].rows[0];
    expect({ value: row.value, pageviews: row.pageviews, visits: row.visits, props: row.props.map((p) => ({ key: p.key, value: p.value, events: p.events, visitors: p.visitors })) })
      .toEqual({ value: 'Signup', pageviews: 2, visits: undefined, props: [{ key: 'plan', value: 'pro', events: 2, visitors: 1 }] });
    expect((await client.listAnalyticsSites({})).data.map((x) => x.id)).toContain(s.id);
  });
});
