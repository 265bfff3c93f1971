import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { sql } from 'kysely';
import { drainAnalytics } from '../src/analytics/drain';
import { analyticsHousekeeping } from '../src/analytics/housekeeping';
import { analyticsClock } from '../src/analytics/visitor';
import { until } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';

// Plausible's Events API at POST /api/event through real HTTP: bodies as
// text/plain and JSON, Plausible's 400 shapes and limits, bots and unknown
// sites dropped with x-plausible-dropped, the client address behind
// TRUST_PROXY only, nothing of the IP or user agent stored, and what the
// drain counts (docs/analytics.md): visitors, pageviews, events, visits,
// bounces and durations per dimension, sessions split after 30 minutes,
// daily salts (a visitor on two days counts twice) deleted after 48 h.

const UA = {
  mac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  windows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
  bot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
};
const T0 = Date.parse('2026-03-10T10:05:00Z');
const realNow = analyticsClock.now;

let server: TestServer;
let org: { organizationId: string; workspaceId: string };

async function site(domain: string): Promise<{ id: string; publicId: string }> {
  const id = `as_${randomBytes(6).toString('hex')}`;
  const publicId = randomBytes(8).toString('hex');
  await sql`insert into analytics_sites (id, organization_id, workspace_id, name, domain, public_id)
    values (${id}, ${org.organizationId}, ${org.workspaceId}, ${domain}, ${domain}, ${publicId})`.execute(server.db);
  return { id, publicId };
}

interface Sent { status: number; headers: Headers; text: string; json: any }
async function post(body: unknown, o: { ua?: string | null; type?: string; at?: number; headers?: Record<string, string>; base?: string } = {}): Promise<Sent> {
  if (o.at !== undefined) { const at = o.at; analyticsClock.now = () => new Date(at); }
  const headers: Record<string, string> = { 'content-type': o.type ?? 'text/plain', ...o.headers };
  if (o.ua !== null) headers['user-agent'] = o.ua ?? UA.mac;
  const res = await fetch(`${o.base ?? server.url}/api/event`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { /* text */ }
  return { status: res.status, headers: res.headers, text, json };
}

/** A POST naming another Host than Vigil's (fetch cannot): not taken by the server's fast path, answered by the app's route. */
function postAs(host: string, body: unknown, o: { base?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string; cors: unknown }> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${o.base ?? server.url}/api/event`);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { host, 'content-type': 'text/plain', 'user-agent': UA.mac, ...o.headers } }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, body: text, cors: res.headers['access-control-allow-origin'] }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const buffered = (siteId: string) => server.db.selectFrom('analytics_buffer').selectAll().where('site_id', '=', siteId).orderBy('seq').execute();

async function rollup(siteId: string, dimension: string, table: 'analytics_hourly' | 'analytics_daily' = 'analytics_hourly') {
  const { rows } = await sql<any>`select value, sum(visitors)::int as visitors, sum(pageviews)::int as pageviews, sum(events)::int as events,
      sum(visits)::int as visits, sum(bounces)::int as bounces, sum(duration_s)::int as duration_s
    from ${sql.table(table)} where site_id = ${siteId} and dimension = ${dimension} group by value order by value`.execute(server.db);
  return Object.fromEntries(rows.map((r: any) => [r.value, { visitors: r.visitors, pageviews: r.pageviews, events: r.events, visits: r.visits, bounces: r.bounces, duration_s: r.duration_s }]));
}

beforeAll(async () => {
  server = await startTestServer({ BASE_URL: '' });
  org = await server.org({ plan: 'free' });
});
afterEach(() => { analyticsClock.now = realNow; });
afterAll(async () => {
  analyticsClock.now = realNow;
  await server.close();
});

test('text/plain and JSON bodies are accepted 202 "ok" with CORS, and are in the buffer when answered', async () => {
  const s = await site('accept.example');
  const plain = await post({ n: 'pageview', u: 'https://accept.example/a', d: 'accept.example', r: null });
  expect([plain.status, plain.text, plain.headers.get('access-control-allow-origin'), plain.headers.get('x-plausible-dropped')]).toEqual([202, 'ok', '*', null]);
  expect(await buffered(s.id)).toHaveLength(1);
  const json = await post({ name: 'pageview', url: 'https://accept.example/b', domain: s.publicId }, { type: 'application/json' });
  expect(json.status).toBe(202);
  expect((await buffered(s.id)).map((r) => r.pathname)).toEqual(['/a', '/b']);
  // No domain: the URL's host, www. removed.
  expect((await post({ n: 'pageview', u: 'https://www.accept.example/c' })).status).toBe(202);
  expect(await buffered(s.id)).toHaveLength(3);
  // Another host (a proxy's name for Vigil) goes through the app's route, with the same answer.
  const viaApp = await postAs('stats.customer.example', { n: 'pageview', u: 'https://accept.example/d', d: 'accept.example' });
  expect(viaApp).toEqual({ status: 202, body: 'ok', cors: '*' });
  expect((await buffered(s.id)).map((r) => r.pathname)).toEqual(['/a', '/b', '/c', '/d']);
  const pre = await fetch(`${server.url}/api/event`, { method: 'OPTIONS', headers: { origin: 'https://accept.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
  expect([pre.status, pre.headers.get('access-control-allow-origin'), pre.headers.get('access-control-allow-headers')]).toEqual([204, '*', 'content-type']);
});

test('the page URL: pathname decoded, fragment kept only with h:1, utm_* from the query, referrer host without www., self-referrals none', async () => {
  const s = await site('parse.example');
  await post({ n: 'pageview', u: 'https://parse.example/caf%C3%A9/%E2%82%AC?utm_source=news&utm_medium=email&utm_campaign=spring#top', d: 'parse.example', r: 'https://www.google.com/search?q=secret' });
  await post({ n: 'pageview', u: 'https://parse.example/app#/settings', d: 'parse.example', h: 1, r: 'https://parse.example/elsewhere' });
  await post({ n: 'pageview', u: 'https://parse.example/app#/settings', d: 'parse.example', r: 'not a url' });
  const rows = await buffered(s.id);
  expect(rows.map((r) => [r.pathname, r.hostname, r.referrer_source, r.referrer, r.utm_source, r.utm_medium, r.utm_campaign])).toEqual([
    ['/café/€', 'parse.example', 'google.com', 'google.com/search', 'news', 'email', 'spring'],
    ['/app#/settings', 'parse.example', null, null, null, null, null],
    ['/app', 'parse.example', null, null, null, null, null],
  ]);
});

test('malformed events: 400 with Plausible\'s error shape, never a 500; huge or hostile payloads bounded', async () => {
  const s = await site('bad.example');
  const cases: [unknown, number, string, string][] = [
    ['{not json', 400, 'request', 'Unable to parse request body as json'],
    ['[1,2]', 400, 'request', 'Unable to parse request body as json'],
    ['null', 400, 'request', 'Unable to parse request body as json'],
    [{ n: 'pageview', d: 'bad.example' }, 400, 'url', 'is required'],
    [{ n: 'pageview', u: 42, d: 'bad.example' }, 400, 'url', 'must be a valid url'],
    [{ n: 'pageview', u: `https://bad.example/${'a'.repeat(2000)}`, d: 'bad.example' }, 400, 'url', 'must be a valid url'],
    [{ n: 'pageview', u: 'data:text/html,hi', d: 'bad.example' }, 400, 'url', 'scheme is not allowed'],
    [{ u: 'https://bad.example/', d: 'bad.example' }, 400, 'event_name', "can't be blank"],
    [{ n: { x: 1 }, u: 'https://bad.example/', d: 'bad.example' }, 400, 'event_name', 'is invalid'],
    [{ n: 'x'.repeat(121), u: 'https://bad.example/', d: 'bad.example' }, 400, 'event_name', 'should be at most 120 character(s)'],
    [{ n: 'pageview', u: 'https://bad.example/', d: ' ' }, 400, 'domain', "can't be blank"],
    [{ n: 'pageview', u: 'https://bad.example/', d: 'bad.example', p: { ['k'.repeat(301)]: 'v' } }, 400, 'props', 'keys should have at most 300 bytes and values 2000 bytes'],
    [{ n: 'pageview', u: 'https://bad.example/', d: 'bad.example', p: { k: 'é'.repeat(1001) } }, 400, 'props', 'keys should have at most 300 bytes and values 2000 bytes'],
    [{ n: 'engagement', u: 'https://bad.example/', d: 'bad.example' }, 400, 'event_name', "engagement event requires a valid integer value for at least one of 'sd' or 'e' fields"],
  ];
  for (const [body, status, field, message] of cases) {
    const r = await post(body);
    expect({ body, status: r.status, json: r.json }).toEqual({ body, status, json: { errors: { [field]: [message] } } });
  }
  const big = await post(JSON.stringify({ n: 'pageview', u: 'https://bad.example/', d: 'bad.example', p: { x: 'y'.repeat(70_000) } }));
  expect([big.status, Object.keys(big.json.errors)]).toEqual([413, ['request']]);
  expect(await buffered(s.id)).toHaveLength(0);

  // Accepted and bounded: 40 props keep the first 30; lists, maps, null and blanks are dropped; numbers and booleans become text;
  // NUL (which PostgreSQL cannot store) is removed from names, paths and props; props may come as a JSON string.
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
  const odd = [
    { n: 'Signup', u: 'https://bad.example/', d: 'bad.example', p: { ...many } },
    { n: 'Sign\u0000up', u: 'https://bad.example/x%00y', d: 'bad.example', p: { a: [1], b: { c: 1 }, c: null, d: ' ', e: true, f: 1.5, 'g\u0000': 'h\u0000', ['__proto__']: 'kept' } },
    { n: 'Signup', u: 'https://bad.example/%E0%A4%A', d: 'bad.example', p: '{"plan":"pro"}', i: false },
    { n: 404, u: '/relative/path', d: 'bad.example', r: 'javascript:alert(1)', h: 'x1' },
  ];
  const statuses = [];
  for (const body of odd) statuses.push((await post(body)).status);
  expect(statuses).toEqual([202, 202, 202, 400]);
  const rows = await buffered(s.id);
  expect(Object.keys(rows[0].props!)).toHaveLength(30);
  expect(rows[0].props).toMatchObject({ k0: '0', k29: '29' });
  expect([rows[1].name, rows[1].pathname, Object.entries(rows[1].props!).sort()]).toEqual(['Signup', '/xy', [['__proto__', 'kept'], ['e', 'true'], ['f', '1.5'], ['g', 'h']]]);
  expect([rows[2].pathname, rows[2].props, rows[2].interactive]).toEqual(['/%E0%A4%A', { plan: 'pro' }, false]);
  expect((await post({ n: 404, u: '/relative/path', d: 'bad.example', r: 'javascript:alert(1)' })).status).toBe(202);
  expect((await buffered(s.id)).slice(-1).map((r) => [r.name, r.hostname, r.pathname, r.referrer_source])).toEqual([['404', '(none)', '/relative/path', null]]);
  // And it all counts without error.
  await drainAnalytics(server.db);
  expect(await buffered(s.id)).toHaveLength(0);
});

test('lone surrogates (valid JSON escapes, not valid UTF-16 text) are stored as U+FFFD, as UTF-8 would make them', async () => {
  const s = await site('surrogate.example');
  const r = await post({ n: 'Sign\ud800up', u: 'https://surrogate.example/a\udc00b?utm_source=x\ud800', d: 'surrogate.example', r: 'https://ref.example/p\ud800', p: { 'k\udc00': 'v\ud800' } });
  expect(r.status).toBe(202);
  const rows = await buffered(s.id);
  expect(rows.map((e) => [e.name, e.props])).toEqual([['Sign\ufffdup', { 'k\ufffd': 'v\ufffd' }]]);
  for (const v of [rows[0].pathname, rows[0].utm_source, rows[0].referrer]) expect((v as unknown as { isWellFormed(): boolean }).isWellFormed()).toBe(true);
  await drainAnalytics(server.db);
  expect(await buffered(s.id)).toHaveLength(0);
});

test('bots, unknown sites and data-centre addresses are dropped with 202 and x-plausible-dropped; several sites count each', async () => {
  const a = await site('multi-a.example');
  const b = await site('multi-b.example');
  const event = (d: string) => ({ n: 'pageview', u: 'https://multi-a.example/', d });
  for (const [r, dropped] of [
    [await post(event('multi-a.example'), { ua: UA.bot }), '1'],
    [await post(event('multi-a.example'), { ua: '' }), '1'],
    [await post(event('multi-a.example'), { headers: { 'x-plausible-ip-type': 'dc_ip' } }), '1'],
    [await post(event('nobody.example')), '1'],
    [await post(event('nobody.example,multi-a.example')), '1'],
    [await post(event('multi-a.example, multi-b.example')), null],
    [await post({ n: 'engagement', u: 'https://multi-a.example/', d: 'multi-a.example', sd: 50, e: 4000 }), null],
  ] as const) {
    expect([r.status, r.text, r.headers.get('x-plausible-dropped')]).toEqual([202, 'ok', dropped]);
  }
  // The unknown one dropped, each known one counted once; engagement is not counted.
  expect(await buffered(a.id)).toHaveLength(2);
  expect(await buffered(b.id)).toHaveLength(1);
  await drainAnalytics(server.db);
  // Sites come from a cache that follows analytics_sites: one created now counts at once, one deleted stops at once.
  const late = { n: 'pageview', u: 'https://late.example/', d: 'late.example' };
  expect((await post(late)).headers.get('x-plausible-dropped')).toBe('1');
  const l = await site('late.example');
  expect((await post(late)).headers.get('x-plausible-dropped')).toBe(null);
  await sql`delete from analytics_sites where id = ${l.id}`.execute(server.db);
  expect((await post(late)).headers.get('x-plausible-dropped')).toBe('1');
  // Its buffered event is dropped by the drain rather than failing it.
  expect(await buffered(l.id)).toHaveLength(1);
  await drainAnalytics(server.db);
  expect(await buffered(l.id)).toHaveLength(0);
});

test('no IP address or user agent is stored anywhere; X-Forwarded-For is ignored without TRUST_PROXY', async () => {
  const s = await site('private.example');
  const ua = `${UA.windows} Private/9.9.9`;
  await post({ n: 'pageview', u: 'https://private.example/', d: 'private.example' }, { ua, headers: { 'x-forwarded-for': '81.2.69.160' } });
  await post({ n: 'pageview', u: 'https://private.example/', d: 'private.example' }, { ua, headers: { 'x-forwarded-for': '8.8.8.8' } });
  const rows = await buffered(s.id);
  // The socket's address (loopback: no country) for both, so one visitor.
  expect(rows.map((r) => [r.country, r.browser, r.os, r.device])).toEqual([[null, 'Firefox', 'Windows', 'desktop'], [null, 'Firefox', 'Windows', 'desktop']]);
  expect(rows[0].visitor).toBe(rows[1].visitor);
  await drainAnalytics(server.db);
  for (const table of ['analytics_buffer', 'analytics_events', 'analytics_sessions', 'analytics_seen', 'analytics_hourly', 'analytics_daily', 'analytics_salts']) {
    const { rows: dump } = await sql<{ t: string }>`select string_agg(x::text, ' ') as t from ${sql.table(table)} x`.execute(server.db);
    for (const secret of ['127.0.0.1', '81.2.69.160', '8.8.8.8', 'Private/9.9.9', 'Mozilla']) expect({ table, has: (dump[0].t ?? '').includes(secret), secret }).toEqual({ table, has: false, secret });
  }
});

test('behind TRUST_PROXY the forwarded client address gives the country and the visitor; the worker counts on its own', async () => {
  const proxied = await startTestServer({ BASE_URL: '', TRUST_PROXY: 'loopback', WORKER: 'true' });
  try {
    const o = await proxied.org({ plan: 'free' });
    const id = 'as_proxied';
    await sql`insert into analytics_sites (id, organization_id, workspace_id, name, domain, public_id)
      values (${id}, ${o.organizationId}, ${o.workspaceId}, 'p', 'proxied.example', 'proxiedpublic')`.execute(proxied.db);
    const event = { n: 'pageview', u: 'https://proxied.example/', d: 'proxied.example' };
    for (const ip of ['81.2.69.160', '8.8.8.8', '10.1.2.3']) expect((await post(event, { base: proxied.url, headers: { 'x-forwarded-for': ip } })).status).toBe(202);
    // The app's route (another Host) takes the same address, from Express's req.ip.
    expect((await postAs('stats.customer.example', event, { base: proxied.url, headers: { 'x-forwarded-for': '2a00:1450:4001::1, 127.0.0.1' } })).status).toBe(202);
    // The worker's drain (woken by the append) counts them within moments.
    const countries = await until('the events counted', async () => {
      const rows = await proxied.db.selectFrom('analytics_daily').select(['value', 'visitors']).where('site_id', '=', id).where('dimension', '=', 'country').orderBy('value').execute();
      return rows.length === 4 && rows;
    }, 5000);
    expect(countries.map((r) => [r.value, Number(r.visitors)])).toEqual([['(none)', 1], ['DE', 1], ['GB', 1], ['US', 1]]);
    const raw = await proxied.db.selectFrom('analytics_events').select(sql<string>`visitor::text`.as('visitor')).execute();
    expect(new Set(raw.map((r) => r.visitor)).size).toBe(4);
  } finally {
    await proxied.close();
  }
});

test('roll-ups: visitors, pageviews, events, visits, bounces and duration per dimension, across batches', async () => {
  const s = await site('count.example');
  const ev = (n: string, path: string, extra: Record<string, unknown> = {}) => ({ n, u: `https://count.example${path}`, d: 'count.example', ...extra });
  // A (iPhone, from Google, utm_source=news): /, /pricing, then an interactive Signup with a prop: not a bounce, 120 s.
  await post(ev('pageview', '/?utm_source=news', { r: 'https://www.google.com/' }), { ua: UA.iphone, at: T0 });
  await drainAnalytics(server.db); // A's first pageview alone: a bounce so far, taken back by the next batch
  await post(ev('pageview', '/pricing'), { ua: UA.iphone, at: T0 + 60_000 });
  // B (Mac): /pricing only, a bounce.
  await post(ev('pageview', '/pricing'), { ua: UA.mac, at: T0 + 10_000 });
  await post(ev('Signup', '/pricing', { p: { plan: 'pro' } }), { ua: UA.iphone, at: T0 + 120_000 });
  // C (iPad): / then a non-interactive event 5 minutes later: still a bounce, lasting 0 s.
  await post(ev('pageview', '/'), { ua: UA.ipad, at: T0 + 20_000 });
  await post(ev('Video Played', '/', { i: false }), { ua: UA.ipad, at: T0 + 320_000 });
  await drainAnalytics(server.db);

  const c = (visitors: number, pageviews: number, events: number, visits: number, bounces: number, duration_s: number) => ({ visitors, pageviews, events, visits, bounces, duration_s });
  expect(await rollup(s.id, '')).toEqual({ '': c(3, 4, 2, 3, 2, 120) });
  expect(await rollup(s.id, '', 'analytics_daily')).toEqual({ '': c(3, 4, 2, 3, 2, 120) });
  expect(await rollup(s.id, 'path')).toEqual({ '/': c(2, 2, 1, 2, 1, 120), '/pricing': c(2, 2, 1, 1, 1, 0) });
  expect(await rollup(s.id, 'referrer')).toEqual({ 'google.com': c(1, 2, 1, 1, 0, 120), '(none)': c(2, 2, 1, 2, 2, 0) });
  expect(await rollup(s.id, 'utm_source')).toEqual({ news: c(1, 2, 1, 1, 0, 120), '(none)': c(2, 2, 1, 2, 2, 0) });
  expect(await rollup(s.id, 'device')).toEqual({ mobile: c(1, 2, 1, 1, 0, 120), desktop: c(1, 1, 0, 1, 1, 0), tablet: c(1, 1, 1, 1, 1, 0) });
  expect(await rollup(s.id, 'browser')).toEqual({ Safari: c(3, 4, 2, 3, 2, 120) });
  expect(await rollup(s.id, 'os')).toEqual({ iOS: c(2, 3, 2, 2, 1, 120), macOS: c(1, 1, 0, 1, 1, 0) });
  expect(await rollup(s.id, 'country')).toEqual({ '(none)': c(3, 4, 2, 3, 2, 120) });
  expect(await rollup(s.id, 'event')).toEqual({ Signup: c(1, 0, 1, 0, 0, 0), 'Video Played': c(1, 0, 1, 0, 0, 0) });
  expect(await rollup(s.id, 'prop')).toEqual({ 'Signup\u001fplan\u001fpro': c(1, 0, 1, 0, 0, 0) });
  // The hourly rows sit in the events' hour.
  const hours = await server.db.selectFrom('analytics_hourly').select('hour').distinct().where('site_id', '=', s.id).execute();
  expect(hours.map((h) => h.hour.toISOString())).toEqual(['2026-03-10T10:00:00.000Z']);
  // Raw events carry their session: A's three events share one.
  const raw = await server.db.selectFrom('analytics_events').select(['name', 'pathname', sql<string>`session::text`.as('session')]).where('site_id', '=', s.id).orderBy('at').execute();
  expect(raw).toHaveLength(6);
  expect(new Set([raw[0], raw[3], raw[4]].map((r) => r.session)).size).toBe(1);
});

test('a session ends after 30 minutes without an event; the visitor is still one that day', async () => {
  const s = await site('session.example');
  const ev = (path: string) => ({ n: 'pageview', u: `https://session.example${path}`, d: 'session.example' });
  await post(ev('/one'), { at: T0 });
  await post(ev('/two'), { at: T0 + 29 * 60_000 });
  await drainAnalytics(server.db);
  await post(ev('/three'), { at: T0 + 60 * 60_000 }); // 31 minutes after /two: a new visit, in the next hour
  await drainAnalytics(server.db);
  expect(await rollup(s.id, '', 'analytics_daily')).toEqual({ '': { visitors: 1, pageviews: 3, events: 0, visits: 2, bounces: 1, duration_s: 29 * 60 } });
  const hourly = await server.db.selectFrom('analytics_hourly').select(['hour', 'visitors', 'visits', 'bounces', 'duration_s']).where('site_id', '=', s.id).where('dimension', '=', '').orderBy('hour').execute();
  expect(hourly.map((h) => [h.hour.toISOString().slice(11, 13), h.visitors, h.visits, h.bounces, h.duration_s])).toEqual([['10', 1, 1, 0, 1740], ['11', 0, 1, 1, 0]]);
  expect(await server.db.selectFrom('analytics_sessions').select('started_at').where('site_id', '=', s.id).execute()).toHaveLength(2);
});

test('a visit under way at midnight continues into the new day (the hash under yesterday\'s salt finds it), and each day still counts its own visitor', async () => {
  const s = await site('midnight.example');
  const other = await site('midnight-other.example');
  const ev = (path: string, d = 'midnight.example') => ({ n: 'pageview', u: `https://${d}${path}`, d });
  const day1 = Date.parse('2026-04-01T23:50:00Z');
  await post(ev('/late'), { at: day1 });
  await post(ev('/late', 'midnight-other.example'), { at: day1 + 5 * 60_000 });
  await drainAnalytics(server.db);
  await post(ev('/after-midnight'), { at: day1 + 20 * 60_000 }); // 00:10: yesterday's visit goes on
  await drainAnalytics(server.db);
  await post(ev('/still'), { at: day1 + 45 * 60_000 }); // 00:35: past the 30-minute window, found by today's hash alone
  // Another visitor after midnight, same page: a visit of its own.
  await post(ev('/after-midnight'), { ua: UA.windows, at: day1 + 21 * 60_000 });
  // The same visitor's visit of the other site (23:55 → 00:05) continues there too, apart (each site has its own salts and sessions).
  await post(ev('/x', 'midnight-other.example'), { at: day1 + 15 * 60_000 });
  await drainAnalytics(server.db);

  const daily = await server.db.selectFrom('analytics_daily').select(['day', 'visitors', 'pageviews', 'visits', 'bounces', 'duration_s'])
    .where('site_id', '=', s.id).where('dimension', '=', '').orderBy('day').execute();
  // The visit (23:50 → 00:35) counts once, on the day it began; its visitor once on each day; the second visitor's bounce on the 2nd.
  expect(daily.map((d) => [d.day, Number(d.visitors), Number(d.pageviews), Number(d.visits), Number(d.bounces), Number(d.duration_s)])).toEqual([
    ['2026-04-01', 1, 1, 1, 0, 45 * 60],
    ['2026-04-02', 2, 3, 1, 1, 0],
  ]);
  const sessions = await server.db.selectFrom('analytics_sessions').select([sql<string>`visitor::text`.as('visitor'), 'pageviews', 'started_at', 'last_at']).where('site_id', '=', s.id).orderBy('started_at').execute();
  expect(sessions.map((r) => [r.started_at.toISOString(), r.last_at.toISOString(), r.pageviews])).toEqual([
    ['2026-04-01T23:50:00.000Z', '2026-04-02T00:35:00.000Z', 3],
    ['2026-04-02T00:11:00.000Z', '2026-04-02T00:11:00.000Z', 1],
  ]);
  // The continued visit's row now carries the new day's hash, which its events after midnight have.
  const raw = await server.db.selectFrom('analytics_events').select([sql<string>`visitor::text`.as('visitor'), 'pathname', 'session']).where('site_id', '=', s.id).orderBy('at').execute();
  expect(raw[0].visitor).not.toBe(raw[1].visitor);
  expect(sessions[0].visitor).toBe(raw[1].visitor);
  expect(new Set([raw[0].session, raw[1].session, raw[3].session]).size).toBe(1);
  const others = await server.db.selectFrom('analytics_sessions').select(['started_at', 'pageviews']).where('site_id', '=', other.id).execute();
  expect(others.map((r) => [r.started_at.toISOString(), r.pageviews])).toEqual([['2026-04-01T23:55:00.000Z', 2]]);
});

test('salts rotate daily: two visitors, one of them on two days, count three daily uniques; old salts, sessions and seen rows go after 48 h', async () => {
  const s = await site('salt.example');
  const ev = { n: 'pageview', u: 'https://salt.example/', d: 'salt.example' };
  await post(ev, { ua: UA.mac, at: T0 });
  await post(ev, { ua: UA.windows, at: T0 + 1000 });
  await post(ev, { ua: UA.mac, at: T0 + 86_400_000 });
  await drainAnalytics(server.db);
  const daily = await server.db.selectFrom('analytics_daily').select(['day', 'visitors']).where('site_id', '=', s.id).where('dimension', '=', '').orderBy('day').execute();
  expect(daily).toEqual([{ day: '2026-03-10', visitors: 2 }, { day: '2026-03-11', visitors: 1 }]);
  expect(daily.reduce((n, d) => n + Number(d.visitors), 0)).toBe(3);
  const raw = await server.db.selectFrom('analytics_events').select(sql<string>`visitor::text`.as('visitor')).where('site_id', '=', s.id).orderBy('at').execute();
  expect(raw[0].visitor).not.toBe(raw[2].visitor);
  const salts = () => server.db.selectFrom('analytics_salts').select('day').where('site_id', '=', s.id).orderBy('day').execute();
  expect((await salts()).map((r) => r.day)).toEqual(['2026-03-10', '2026-03-11']);

  // 47 h after the first day began both stay; 48 h after, its salt and what was kept about its visitors go.
  await analyticsHousekeeping(server.db, new Date(Date.parse('2026-03-11T23:59:00Z')));
  expect((await salts()).map((r) => r.day)).toEqual(['2026-03-10', '2026-03-11']);
  await analyticsHousekeeping(server.db, new Date(Date.parse('2026-03-12T00:00:00Z')));
  expect((await salts()).map((r) => r.day)).toEqual(['2026-03-11']);
  const seenDays = await server.db.selectFrom('analytics_seen').select('day').distinct().where('site_id', '=', s.id).execute();
  expect(seenDays.map((r) => r.day)).toEqual(['2026-03-11']);
  // Sessions 48 h after their last event; raw events after the plan's retention (free: 90 days); roll-ups stay.
  await analyticsHousekeeping(server.db, new Date(T0 + 86_400_000 + 48 * 3600_000 + 1000));
  expect(await server.db.selectFrom('analytics_sessions').select('visitor').where('site_id', '=', s.id).execute()).toHaveLength(0);
  expect(await server.db.selectFrom('analytics_events').select('at').where('site_id', '=', s.id).execute()).toHaveLength(3);
  const hourly = () => server.db.selectFrom('analytics_hourly').select('dimension').distinct().where('site_id', '=', s.id).orderBy('dimension').execute();
  expect((await hourly()).map((r) => r.dimension)).toEqual(['', 'browser', 'country', 'device', 'os', 'path', 'referrer', 'utm_campaign', 'utm_medium', 'utm_source']);
  // Raw events and hourly roll-ups after the plan's retention (free: 90 days); daily (and monthly) roll-ups stay with the site.
  await analyticsHousekeeping(server.db, new Date(T0 + 90 * 86_400_000 + 1000));
  expect(await server.db.selectFrom('analytics_events').select('at').where('site_id', '=', s.id).execute()).toHaveLength(2);
  expect(await hourly()).toHaveLength(10);
  await analyticsHousekeeping(server.db, new Date(T0 + 92 * 86_400_000));
  expect(await server.db.selectFrom('analytics_events').select('at').where('site_id', '=', s.id).execute()).toHaveLength(0);
  expect(await hourly()).toHaveLength(0);
  expect(await server.db.selectFrom('analytics_daily').select('day').where('site_id', '=', s.id).where('dimension', '=', '').execute()).toHaveLength(2);
  expect(await server.db.selectFrom('analytics_monthly').select('month').where('site_id', '=', s.id).where('dimension', '=', '').execute()).toHaveLength(1);
});

test('a visitor met under many values is still counted once per value and day (its seen set searched as a set once large)', async () => {
  const s = await site('many.example');
  const ev = (path: string) => ({ n: 'pageview', u: `https://many.example${path}`, d: 'many.example' });
  for (let i = 0; i < 70; i++) await post(ev(`/p${i}`), { at: T0 + i * 1000 });
  await drainAnalytics(server.db);
  for (const path of ['/p3', '/p69', '/new']) await post(ev(path), { at: T0 + 100_000 });
  await drainAnalytics(server.db);
  const paths = await rollup(s.id, 'path', 'analytics_daily');
  expect(Object.keys(paths)).toHaveLength(71);
  expect([paths['/p3'], paths['/p69'], paths['/new']].map((r) => [r.visitors, r.pageviews])).toEqual([[1, 2], [1, 2], [1, 1]]);
  expect((await rollup(s.id, '', 'analytics_daily'))['']).toMatchObject({ visitors: 1, pageviews: 73, visits: 1, bounces: 0 });
});

test('the monthly roll-ups the drain writes are its daily rows summed per month, across batches and month ends', async () => {
  const s = await site('months.example');
  const ev = (path: string) => ({ n: 'pageview', u: `https://months.example${path}`, d: 'months.example', r: 'https://news.example/x' });
  // The last hours of March and the first of April, in two batches.
  const end = Date.parse('2026-03-31T22:00:00Z');
  for (let i = 0; i < 6; i++) await post(ev(`/m${i % 3}`), { at: end + i * 40 * 60_000, ua: i % 2 ? UA.mac : UA.iphone });
  await drainAnalytics(server.db);
  for (let i = 0; i < 4; i++) await post(ev(`/m${i % 2}`), { at: end + 5 * 3600_000 + i * 60_000 });
  await drainAnalytics(server.db);
  const metrics = sql`sum(visitors)::int as visitors, sum(pageviews)::int as pageviews, sum(events)::int as events, sum(visits)::int as visits, sum(bounces)::int as bounces, sum(duration_s)::int as duration_s`;
  const fromDaily = await sql`select to_char(date_trunc('month', day), 'YYYY-MM-DD') as month, dimension, value, ${metrics}
    from analytics_daily where site_id = ${s.id} group by 1, 2, 3 order by 1, 2, 3`.execute(server.db);
  const monthly = await sql`select to_char(month, 'YYYY-MM-DD') as month, dimension, value, ${metrics}
    from analytics_monthly where site_id = ${s.id} group by 1, 2, 3 order by 1, 2, 3`.execute(server.db);
  expect(fromDaily.rows.length).toBeGreaterThan(10);
  expect(new Set(fromDaily.rows.map((r: any) => r.month))).toEqual(new Set(['2026-03-01', '2026-04-01']));
  expect(monthly.rows).toEqual(fromDaily.rows);
});
