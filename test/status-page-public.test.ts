import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { checkNow } from './support/monitors';

// The page people open during an outage, and its machine-readable twins:
// what it shows (statuses, uptime, incidents with published updates,
// maintenance), what it never shows (postmortems, targets, check messages,
// host addresses), who may see it, its security headers, and that a visit
// costs no database work.

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let target: http.Server;
let targetUrl: string;
const failing = new Set<string>();

const SECRET_PATH = 'never-shown-path-7f3a';
const POSTMORTEM = 'Root cause: the intern dropped the database (postmortem text)';

async function httpMonitor(name: string, extra: Record<string, unknown> = {}) {
  return ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600,
    config: JSON.stringify({ url: `${targetUrl}/${SECRET_PATH}/${name}`, timeoutSeconds: 5 }), ...extra,
  }), 201).id as string;
}

async function page(name: string, settings: Record<string, unknown> = {}, components: [string, string | null][] = []) {
  const p = ok('createStatusPage', await api.post('/status-pages', { name, workspaceId: org.workspaceId }), 201);
  if (Object.keys(settings).length) ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, settings));
  for (const [monitorId, displayName] of components) ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId, displayName }), 201);
  return p as { id: string; slug: string };
}

interface Got { status: number; headers: http.IncomingHttpHeaders; text: string }
/** A raw GET (fetch hides Host and decompresses): headers of our choice, the body as sent. */
function get(path: string, headers: Record<string, string> = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    http.get(`${server.url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = (res.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, text });
      });
    }).on('error', reject);
  });
}

const twins = ['', '/api/v2/summary.json', '/api/v2/status.json', '/feed.xml', '/atom.xml', '/badge.svg'];

beforeAll(async () => {
  target = http.createServer((req, res) => {
    res.statusCode = [...failing].some((f) => req.url?.endsWith(`/${f}`)) ? 503 : 200;
    res.end('x');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await new Promise((r) => target.close(r));
});

test('an outage: banner, component state, the incident with its published updates; never a postmortem, a target or a check message', async () => {
  const web = await httpMonitor('web');
  const db = await httpMonitor('db');
  await checkNow(server, api, web);
  await checkNow(server, api, db);
  const p = await page('Outage page', {}, [[web, 'Website'], [db, 'Database <b>primary</b>']]);
  let html = (await get(`/status/${p.slug}`)).text;
  expect(html).toContain('All systems operational');
  expect(html).toContain('Database &lt;b&gt;primary&lt;/b&gt;');
  expect(html).not.toContain('<b>primary</b>');

  failing.add('db');
  expect((await checkNow(server, api, db)).status).toBe('down');
  const incident = ok('listIncidents', await api.get('/incidents?open=true')).find((i: { monitorId: string }) => i.monitorId === db);
  ok('updateIncident', await api.patch(`/incidents/${incident.id}`, { comment: 'We are failing over to the replica.', publish: true }));
  ok('updateIncident', await api.patch(`/incidents/${incident.id}`, { comment: 'internal: paged Bob, he is asleep', publish: false }));
  html = (await get(`/status/${p.slug}`)).text;
  expect(html).toContain('Partial outage');
  expect(html).toMatch(/class="state major_outage">Major outage/);
  expect(html).toContain('Current incidents');
  expect(html).toContain('We are failing over to the replica.');
  expect(html).toContain('We are investigating an outage of Database &lt;b&gt;primary&lt;/b&gt;.');
  expect(html).not.toContain('paged Bob');

  const summary = JSON.parse((await get(`/status/${p.slug}/api/v2/summary.json`)).text);
  expect(summary.status).toEqual({ indicator: 'major', description: 'Partial System Outage' });
  expect(summary.components.map((c: { name: string; status: string }) => [c.name, c.status])).toEqual([['Website', 'operational'], ['Database <b>primary</b>', 'major_outage']]);
  expect(summary.incidents).toHaveLength(1);
  expect(summary.incidents[0]).toMatchObject({ id: incident.id, status: 'monitoring', impact: 'major', components: [{ name: 'Database <b>primary</b>', status: 'major_outage' }] });
  expect(summary.incidents[0].incident_updates[0]).toMatchObject({ status: 'monitoring', body: 'We are failing over to the replica.' });
  const status = JSON.parse((await get(`/status/${p.slug}/api/v2/status.json`)).text);
  expect(status).toEqual({ page: summary.page, status: summary.status });
  expect((await get(`/status/${p.slug}/badge.svg`)).text).toMatch(/fill="#fe7d37".*partial outage/s);

  failing.delete('db');
  expect((await checkNow(server, api, db)).status).toBe('up');
  ok('setIncidentPostmortem', await api.put(`/incidents/${incident.id}/postmortem`, { body: POSTMORTEM }));
  html = (await get(`/status/${p.slug}`)).text;
  expect(html).toContain('All systems operational');
  expect(html).toContain('Past incidents');
  expect(html).toContain('This incident has been resolved.');
  expect(JSON.parse((await get(`/status/${p.slug}/api/v2/summary.json`)).text).incidents).toEqual([]);
  const rss = (await get(`/status/${p.slug}/feed.xml`)).text;
  const atom = (await get(`/status/${p.slug}/atom.xml`)).text;
  expect(rss).toMatch(/^<\?xml[\s\S]*<rss version="2.0"[\s\S]*<item>\s*<title><!\[CDATA\[Database <b>primary<\/b> outage — Resolved\]\]><\/title>/);
  expect(atom).toMatch(/<feed xmlns="http:\/\/www.w3.org\/2005\/Atom"[\s\S]*<entry>/);
  for (const path of twins) {
    const got = (await get(`/status/${p.slug}${path}`)).text;
    for (const never of [POSTMORTEM, SECRET_PATH, targetUrl.replace('http://', ''), 'HTTP 503', 'paged Bob', 'region', 'probe']) {
      expect({ path, leaked: got.includes(never) ? never : null }).toEqual({ path, leaked: null });
    }
  }
});

test('a suppressed outage shows under its root, as one outage touching both components', async () => {
  const core = await httpMonitor('core');
  const edge = await httpMonitor('edge', { dependsOn: [core] });
  await checkNow(server, api, core);
  await checkNow(server, api, edge);
  const p = await page('Dependencies', {}, [[core, 'Core'], [edge, 'Edge']]);
  failing.add('core');
  failing.add('edge');
  await checkNow(server, api, core);
  await checkNow(server, api, edge);
  const summary = JSON.parse((await get(`/status/${p.slug}/api/v2/summary.json`)).text);
  expect(summary.incidents).toHaveLength(1);
  expect(summary.incidents[0].components.map((c: { name: string }) => c.name).sort()).toEqual(['Core', 'Edge']);
  expect(summary.incidents[0].impact).toBe('critical');
  expect(summary.status.indicator).toBe('critical');
  failing.delete('core');
  failing.delete('edge');
  await checkNow(server, api, core);
  await checkNow(server, api, edge);
  expect(JSON.parse((await get(`/status/${p.slug}/api/v2/summary.json`)).text).incidents).toEqual([]);
});

test('maintenance shown on the page (and only when showOnStatusPage); a window in force marks its components', async () => {
  const m = await httpMonitor('maint');
  await checkNow(server, api, m);
  const p = await page('Maintenance', {}, [[m, 'Billing']]);
  const soon = { title: 'Database upgrade', description: 'Ten minutes of read-only mode.', workspaceId: org.workspaceId, monitorIds: [m],
    startsAt: new Date(Date.now() + 3_600_000).toISOString(), endsAt: new Date(Date.now() + 7_200_000).toISOString() };
  ok('createMaintenanceWindow', await api.post('/maintenance', soon), 201);
  ok('createMaintenanceWindow', await api.post('/maintenance', { ...soon, title: 'Hidden work', showOnStatusPage: false }), 201);
  let html = (await get(`/status/${p.slug}`)).text;
  expect(html).toContain('Scheduled maintenance');
  expect(html).toContain('Database upgrade');
  expect(html).toContain('Ten minutes of read-only mode.');
  expect(html).not.toContain('Hidden work');
  ok('createMaintenanceWindow', await api.post('/maintenance', { ...soon, title: 'Right now', startsAt: new Date(Date.now() - 60_000).toISOString() }), 201);
  html = (await get(`/status/${p.slug}`)).text;
  expect(html).toMatch(/class="state under_maintenance">In progress/);
  expect(html).toMatch(/Billing<\/span><span class="state under_maintenance">Under maintenance/);
  const summary = JSON.parse((await get(`/status/${p.slug}/api/v2/summary.json`)).text);
  expect(summary.scheduled_maintenances.map((w: { name: string; status: string }) => [w.name, w.status])).toEqual([['Right now', 'in_progress'], ['Database upgrade', 'scheduled']]);
  expect(summary.components[0].status).toBe('under_maintenance');
  expect(Date.parse(summary.components[0].updated_at)).toBeGreaterThanOrEqual(Date.parse(summary.components[0].created_at));
});

test('summary.json: a component is never updated before it was created; updated_at follows its status changes after that', async () => {
  // The monitor's status began before the component was placed on the page.
  const m = await httpMonitor('older');
  await checkNow(server, api, m);
  await new Promise((r) => setTimeout(r, 1100));
  const p = await page('Timestamps', {}, [[m, 'Older']]);
  const stamps = async () => {
    const c = JSON.parse((await get(`/status/${p.slug}/api/v2/summary.json`)).text).components.find((x: { name: string }) => x.name === 'Older');
    return { created: Date.parse(c.created_at), updated: Date.parse(c.updated_at) };
  };
  const placed = await stamps();
  expect(placed.updated).toBeGreaterThanOrEqual(placed.created);
  expect(placed.updated).toBe(placed.created);
  // A status change after placement moves updated_at to when it happened.
  failing.add('older');
  expect((await checkNow(server, api, m)).status).toBe('down');
  const changed = await stamps();
  expect(changed.created).toBe(placed.created);
  expect(changed.updated).toBeGreaterThan(placed.created);
  failing.delete('older');
});

test('uptime cells from the daily roll-ups; response times when asked; grouped by host without the host\'s address', async () => {
  const m = await httpMonitor('history');
  await checkNow(server, api, m);
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  await server.db.insertInto('rollup_daily').values([
    { monitor_id: m, day: day(3), checks: 1000, failures: 100, degraded: 0, downtime_seconds: 8640, response_sum_ms: 0, response_count: 0 },
    { monitor_id: m, day: day(2), checks: 1000, failures: 0, degraded: 0, downtime_seconds: 0, response_sum_ms: 0, response_count: 0 },
  ]).onConflict((oc) => oc.columns(['monitor_id', 'day']).doUpdateSet({ checks: 1000 })).execute();
  const host = ok('createHost', await api.post('/hosts', { name: 'db-host-1', address: '10.9.8.7', provider: 'hetzner' }), 201);
  ok('setMonitorHosts', await api.put(`/monitors/${m}/hosts`, { hostIds: [host.id] }));
  const p = await page('History', { historyDays: 7, showResponseTimes: true, groupByHost: true }, [[m, 'Payments']]);
  const html = (await get(`/status/${p.slug}`)).text;
  expect(html.match(/<rect x="\d+" width="4"/g)).toHaveLength(7);
  expect(html).toMatch(/class="u3"><title>[^<]*90\.00% uptime, 2 h 24 min down<\/title>/);
  expect(html).toMatch(/class="u0"><title>[^<]*100\.00% uptime<\/title>/);
  expect(html).toContain('Response time, last 24 hours');
  expect(html).toContain('<h3>db-host-1</h3>');
  expect(html).not.toContain('10.9.8.7');
  expect(html).not.toContain('hetzner');
});

test('the page speaks its language', async () => {
  const m = await httpMonitor('lang');
  await checkNow(server, api, m);
  for (const [language, words] of [['de', 'Alle Systeme betriebsbereit'], ['fr', 'Tous les systèmes sont opérationnels'], ['es', 'Todos los sistemas operativos']]) {
    const p = await page(`Lang ${language}`, { language }, [[m, 'X']]);
    const html = (await get(`/status/${p.slug}`)).text;
    expect(html).toContain(`<html lang="${language}">`);
    expect(html).toContain(words);
    expect(html).not.toContain('All systems operational');
  }
});

test('every public answer carries the security headers; the CSP allows no script and only the hashed style', async () => {
  const p = await page('Headers', { logoUrl: 'https://cdn.example.com/logo.png' });
  for (const path of [...twins, '/nothing-here']) {
    const r = await get(`/status/${p.slug}${path}`);
    expect({ path, nosniff: r.headers['x-content-type-options'], referrer: r.headers['referrer-policy'], csp: !!r.headers['content-security-policy'] })
      .toEqual({ path, nosniff: 'nosniff', referrer: 'no-referrer', csp: true });
  }
  const r = await get(`/status/${p.slug}`);
  const csp = String(r.headers['content-security-policy']);
  expect(csp).toMatch(/default-src 'none'/);
  expect(csp).toMatch(/script-src 'none'/);
  expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  expect(csp).toMatch(/img-src 'self' data: https:\/\/cdn\.example\.com(;|$)/);
  expect(csp).toMatch(/frame-ancestors 'none'/);
  expect(r.text).toContain('<img src="https://cdn.example.com/logo.png"');
  // The style hash in the header is the hash of the page's one style element.
  const style = /<style>([\s\S]*?)<\/style>/.exec(r.text)![1];
  const { createHash } = await import('node:crypto');
  expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
});

test('gzip, ETag and 304; public pages may be cached by others, machine twins allow any origin', async () => {
  const p = await page('Caching');
  const first = await get(`/status/${p.slug}`, { 'accept-encoding': 'gzip' });
  expect(first.headers['content-encoding']).toBe('gzip');
  expect(first.headers['cache-control']).toBe('public, max-age=15');
  const again = await get(`/status/${p.slug}`, { 'if-none-match': String(first.headers.etag) });
  expect(again.status).toBe(304);
  const json = await get(`/status/${p.slug}/api/v2/summary.json`);
  expect(json.headers['access-control-allow-origin']).toBe('*');
});

test('a visit costs no database work until something the page shows changes', async () => {
  const m = await httpMonitor('cached');
  await checkNow(server, api, m);
  const p = await page('Cached page', {}, [[m, 'Cached API']]);
  await get(`/status/${p.slug}`);
  const before = server.statusPageLoads();
  for (let i = 0; i < 50; i++) await get(`/status/${p.slug}${twins[i % twins.length]}`);
  expect(server.statusPageLoads()).toBe(before);
  // A check that changes nothing visible (still up) keeps the page; a status change drops it at once.
  await checkNow(server, api, m);
  await get(`/status/${p.slug}`);
  expect(server.statusPageLoads()).toBe(before);
  failing.add('cached');
  await checkNow(server, api, m);
  await until('the page to show the outage', async () => (await get(`/status/${p.slug}`)).text.includes('Major outage'));
  expect(server.statusPageLoads()).toBeGreaterThan(before);
  failing.delete('cached');
  await checkNow(server, api, m);
  // A change of the page's settings shows at once too.
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { headline: 'Fresh headline' }));
  expect((await get(`/status/${p.slug}`)).text).toContain('Fresh headline');
});

test('password pages: the form, a wrong password said and rate limited, a right one sets a signed HttpOnly cookie', async () => {
  const p = await page('Protected', { password: 'open sesame 123', visibility: 'password' });
  for (const path of twins.slice(1)) expect((await get(`/status/${p.slug}${path}`)).status).toBe(403);
  const form = await get(`/status/${p.slug}`);
  expect(form.status).toBe(200);
  expect(form.headers['cache-control']).toBe('private, no-store');
  expect(form.text).toContain('name="password"');
  expect(form.text).toContain('<meta name="robots" content="noindex">');
  const post = (password: string, address?: string) => new Promise<Got>((resolve, reject) => {
    const body = new URLSearchParams({ password }).toString();
    const req = http.request(`${server.url}/status/${p.slug}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, localAddress: address }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
  const wrong = await post('guess one', '127.0.0.2');
  expect(wrong.status).toBe(403);
  expect(wrong.text).toContain('That password is not right.');
  const right = await post('open sesame 123', '127.0.0.2');
  expect(right.status).toBe(303);
  expect(right.headers.location).toBe(`/status/${p.slug}`);
  const cookie = String(right.headers['set-cookie']?.[0]);
  expect(cookie).toMatch(/HttpOnly/);
  expect(cookie).toMatch(/SameSite=Lax/);
  expect(cookie).toMatch(new RegExp(`Path=/status/${p.slug}`));
  const session = cookie.split(';')[0];
  const inside = await get(`/status/${p.slug}`, { cookie: session });
  expect(inside.status).toBe(200);
  expect(inside.headers['cache-control']).toBe('private, no-store');
  expect((await get(`/status/${p.slug}/api/v2/summary.json`, { cookie: session })).status).toBe(200);
  // A forged or tampered cookie is nothing.
  const forged = await get(`/status/${p.slug}`, { cookie: session.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) });
  expect(forged.text).toContain('name="password"');
  expect((await get(`/status/${p.slug}/api/v2/summary.json`, { cookie: session.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) })).status).toBe(403);
  // Five guesses a minute from one address, then 429, even for the right password.
  for (let i = 0; i < 3; i++) expect((await post(`guess ${i}`, '127.0.0.3')).status).toBe(403);
  await post('open sesame 123', '127.0.0.3');
  await post('guess 4', '127.0.0.3');
  const blocked = await post('open sesame 123', '127.0.0.3');
  expect(blocked.status).toBe(429);
  expect(blocked.headers['retry-after']).toMatch(/^\d+$/);
  expect(blocked.text).toContain('Too many tries');
  // A new password signs everybody out.
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { password: 'another password 456' }));
  expect((await get(`/status/${p.slug}`, { cookie: session })).text).toContain('name="password"');
  expect((await get(`/status/${p.slug}/badge.svg`, { cookie: session })).status).toBe(403);
});

test('a private page does not exist for visitors', async () => {
  const p = await page('Draft', { visibility: 'private' });
  for (const path of twins) expect((await get(`/status/${p.slug}${path}`)).status).toBe(404);
  expect((await get('/status/no-such-page')).status).toBe(404);
});
