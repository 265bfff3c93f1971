import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../src/log';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { checkNow } from './support/monitors';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';

// Running Vigil in production: /healthz and /readyz for orchestrators,
// Prometheus /metrics (behind METRICS_TOKEN), and JSON logs with request ids
// and no secrets, proved on real requests.

const METRICS_TOKEN = 'metrics-token-5f2c9a';
const lines: string[] = [];
const sink = new Writable({ write(chunk, _enc, cb) { lines.push(...String(chunk).split('\n').filter(Boolean)); cb(); } });
const logs = () => lines.map((l) => JSON.parse(l) as Record<string, any>);

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let hooks: HttpReceiver;
let target: http.Server;
let targetUrl: string;
let failing = false;

/** The samples of a Prometheus text exposition: `name{labels}` → value. */
async function scrape(token: string | null = METRICS_TOKEN): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^(\S+?)(\{.*\})? (\S+)$/.exec(line);
    if (m) samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return samples;
}
const sample = (s: Map<string, number>, name: string, labels: Record<string, string> = {}) => {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  let found = false;
  for (const [key, value] of s) {
    const [n, l = ''] = key.split('{');
    if (n === name && want.every((w) => l.includes(w))) { total += value; found = true; }
  }
  return found ? total : undefined;
};

beforeAll(async () => {
  hooks = await startHttpReceiver();
  target = http.createServer((_req, res) => { res.statusCode = failing ? 503 : 200; res.end('x'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer(
    { WORKER: 'true', METRICS_TOKEN, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' },
    { log: createLogger('debug', { destination: sink }) },
  );
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await hooks.close();
  await new Promise((r) => target.close(r));
});

test('/healthz says the process is alive; /readyz checks the database, the migrations and the scheduler', async () => {
  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: 'ok' });
  const ready = await fetch(`${server.url}/readyz`);
  expect(ready.status).toBe(200);
  expect(ready.headers.get('cache-control')).toBe('no-store');
  expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', scheduler: 'ok' } });
});

test('/metrics needs METRICS_TOKEN when one is set', async () => {
  expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
  expect((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
  const s = await scrape();
  expect(sample(s, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  expect(sample(s, 'nodejs_eventloop_lag_p99_seconds')).toBeDefined();
  expect(sample(s, 'vigil_build_info')).toBe(1);
});

test('metrics: requests by operation, checks by kind and result, lag, deliveries, queue, pool, cache, refusals', async () => {
  const mon = ok('createMonitor', await api.post('/monitors', {
    name: 'metered', kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: `${targetUrl}/m`, timeoutSeconds: 5 }),
  }), 201).id as string;
  const channel = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'hook', target: `${hooks.url}/hook`, workspaceId: org.workspaceId }), 201);
  ok('setMonitorChannels', await api.put(`/monitors/${mon}/channels`, { channelIds: [channel.id] }));
  await checkNow(server, api, mon);
  failing = true;
  await checkNow(server, api, mon);
  await hooks.waitFor(1);
  for (let i = 0; i < 3; i++) ok('getMonitor', await api.get(`/monitors/${mon}`));

  await until('the delivery counted', async () => sample(await scrape(), 'vigil_deliveries_total', { channel_kind: 'webhook', outcome: 'delivered' }));
  const s = await scrape();
  expect(sample(s, 'vigil_http_requests_total', { operation: 'getMonitor', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(3);
  expect(sample(s, 'vigil_http_requests_total', { operation: 'createMonitor', method: 'POST', status: '201' })).toBeGreaterThanOrEqual(1);
  expect(sample(s, 'vigil_http_request_duration_seconds_count', { operation: 'getMonitor', method: 'GET' })).toBeGreaterThanOrEqual(3);
  expect(sample(s, 'vigil_checks_total', { kind: 'http', result: 'up' })).toBeGreaterThanOrEqual(1);
  expect(sample(s, 'vigil_checks_total', { kind: 'http', result: 'down' })).toBeGreaterThanOrEqual(1);
  expect(sample(s, 'vigil_check_duration_seconds_count', { kind: 'http' })).toBeGreaterThanOrEqual(2);
  expect(sample(s, 'vigil_scheduling_lag_seconds_count')).toBeGreaterThanOrEqual(2);
  expect(sample(s, 'vigil_monitors_due_unclaimed')).toBe(0);
  expect(sample(s, 'vigil_checks_overdue_seconds')).toBe(0);
  expect(sample(s, 'vigil_job_queue_depth') ?? 0).toBeGreaterThanOrEqual(0);
  expect(sample(s, 'vigil_db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(0);
  expect(sample(s, 'vigil_db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
  expect(sample(s, 'vigil_db_pool_waiting')).toBe(0);
  expect(sample(s, 'vigil_read_cache_hits_total')).toBeGreaterThanOrEqual(1);
  expect(sample(s, 'vigil_read_cache_misses_total')).toBeGreaterThanOrEqual(1);
  const lastPoll = sample(s, 'vigil_worker_last_poll_timestamp_seconds')!;
  expect(Math.abs(Date.now() / 1000 - lastPoll)).toBeLessThan(60);
  // No raw path, id or token ever becomes a label.
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  expect(text).not.toContain(mon);
  expect(text).not.toContain(org.organizationId);
  failing = false;
});

test('rate-limit refusals are counted by bucket', async () => {
  const limited = await startTestServer({ RATE_LIMIT_READ: '2', RATE_LIMIT_WRITE: '100000' });
  try {
    const o = await limited.org({ plan: 'enterprise' });
    const a = limited.api(o.apiKey);
    for (let i = 0; i < 4; i++) await a.get('/monitors');
    const res = await fetch(`${limited.url}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/^vigil_rate_limit_refusals_total\{bucket="R"\} [1-9]/m);
  } finally {
    await limited.close();
  }
});

test('one JSON line per request: request id (kept or made, echoed), operation, status, duration, organisation', async () => {
  lines.length = 0;
  const given = await fetch(`${server.url}/api/v1/monitors`, { headers: { authorization: `Bearer ${org.apiKey}`, 'x-request-id': 'trace-abc.123' } });
  expect(given.headers.get('x-request-id')).toBe('trace-abc.123');
  const made = await fetch(`${server.url}/api/v1/monitors`, { headers: { authorization: `Bearer ${org.apiKey}`, 'x-request-id': 'bad id with spaces' } });
  const madeId = made.headers.get('x-request-id')!;
  expect(madeId).toMatch(/^[0-9a-f-]{36}$/);
  await until('the lines', async () => logs().filter((l) => l.msg === 'request').length >= 2);
  const [a, b] = logs().filter((l) => l.msg === 'request');
  expect(a).toMatchObject({ level: 'info', reqId: 'trace-abc.123', method: 'GET', path: '/api/v1/monitors', operationId: 'listMonitors', status: 200, organizationId: org.organizationId });
  expect(typeof a.durationMs).toBe('number');
  expect(typeof a.time).toBe('string');
  expect(b.reqId).toBe(madeId);
});

test('worker lines carry the monitor id and kind', async () => {
  const mon = ok('createMonitor', await api.post('/monitors', {
    name: 'logged', kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: `${targetUrl}/l`, timeoutSeconds: 5 }),
  }), 201).id as string;
  await checkNow(server, api, mon);
  await until('the check line', async () => logs().find((l) => l.msg === 'check' && l.monitorId === mon));
  expect(logs().find((l) => l.msg === 'check' && l.monitorId === mon)).toMatchObject({ component: 'worker', kind: 'http', outcome: 'up' });
});

test('no secret reaches the log: keys, channel targets and secrets, ping and feed tokens, page passwords', async () => {
  lines.length = 0;
  const secrets: string[] = [org.apiKey, METRICS_TOKEN];
  const hookTarget = `${hooks.url}/hook?token=hook-secret-7d1e`;
  const channel = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'secretive', target: hookTarget, workspaceId: org.workspaceId }), 201);
  secrets.push('hook-secret-7d1e', channel.secret);
  const hb = ok('createMonitor', await api.post('/monitors', { name: 'beat', kind: 'heartbeat', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ graceSeconds: 60 }) }), 201).id;
  const pushUrl = /https?:\/\/\S+\/ping\/[A-Za-z0-9_-]+/.exec(JSON.stringify((await api.get(`/monitors/${hb}/push-url`)).body))![0];
  secrets.push(pushUrl.split('/ping/')[1]);
  expect((await fetch(pushUrl)).status).toBe(200);
  expect((await fetch(`${pushUrl}/fail`, { method: 'POST', body: 'disk full' })).status).toBe(200);
  const feed = ok('rotateIncidentFeed', await api.post('/incident-feed'), 201) as { rssUrl: string };
  secrets.push(feed.rssUrl.split('/feeds/incidents/')[1].split('/')[0]);
  expect((await fetch(feed.rssUrl)).status).toBe(200);
  const page = ok('createStatusPage', await api.post('/status-pages', { name: 'Logged page', workspaceId: org.workspaceId }), 201);
  ok('updateStatusPage', await api.patch(`/status-pages/${page.id}`, { visibility: 'password', password: 'page-password-91b3' }));
  secrets.push('page-password-91b3');
  await fetch(`${server.url}/status/${page.slug}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=page-password-91b3' });
  await fetch(`${server.url}/status/${page.slug}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=wrong-guess' });
  // A request that fails validation, with a secret in its body and query.
  await fetch(`${server.url}/api/v1/channels?token=query-secret-44`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'nope', target: 'body-secret-55' }) });
  secrets.push('query-secret-44', 'body-secret-55');
  await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  await until('request lines', async () => logs().filter((l) => l.msg === 'request').length >= 9);
  const text = lines.join('\n');
  for (const s of secrets) expect({ secret: s, found: text.includes(s) }).toEqual({ secret: s, found: false });
  expect(text).toContain('"path":"/ping/…"');
  expect(text).toContain('"path":"/feeds/incidents/…');
});

test('a field that should never be logged is censored by configuration', () => {
  const out: string[] = [];
  const log = createLogger('info', { destination: new Writable({ write(c, _e, cb) { out.push(String(c)); cb(); } }) });
  log.info('delivery', { target: 'https://hooks.example/T0/B0/xyz', password: 'p', headers: { authorization: 'Bearer vk_1' }, channel: { secret: 's', token: 't' } });
  const line = JSON.parse(out[0]);
  expect(line).toMatchObject({ target: '[redacted]', password: '[redacted]', channel: { secret: '[redacted]', token: '[redacted]' } });
  expect(out[0]).not.toContain('vk_1');
});

test('at info, a successful event or ping of the volume paths writes no line; a refused one does, as every API request', async () => {
  const out: string[] = [];
  const quiet = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' },
    { log: createLogger('info', { destination: new Writable({ write(c, _e, cb) { out.push(String(c)); cb(); } }) }) });
  try {
    const o = await quiet.org();
    const owner = quiet.api(o.apiKey);
    const hb = ok('createMonitor', await owner.post('/monitors', { name: 'beat', kind: 'heartbeat', workspaceId: o.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ graceSeconds: 60 }) }), 201).id;
    const pushUrl = ok('getMonitorPushUrl', await owner.get(`/monitors/${hb}/push-url`)).url as string;
    ok('createAnalyticsSite', await owner.post('/analytics', { domain: 'quiet.example.com', workspaceId: o.workspaceId }), 201);
    const event = (body: string) => fetch(`${quiet.url}/api/event`, { method: 'POST', headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36' }, body });
    expect((await fetch(pushUrl)).status).toBe(200);
    expect((await event(JSON.stringify({ n: 'pageview', u: 'https://quiet.example.com/a', d: 'quiet.example.com' }))).status).toBe(202);
    expect((await event('{"n":')).status).toBe(400);
    const requests = () => out.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    await until('the refused event and the API requests logged', async () => requests().some((l) => l.status === 400) && requests().filter((l) => l.operationId).length >= 3);
    expect(requests().filter((l) => l.path === '/api/event').map((l) => l.status)).toEqual([400]);
    expect(requests().filter((l) => String(l.path).startsWith('/ping/'))).toEqual([]);
  } finally {
    await quiet.close();
  }
});
