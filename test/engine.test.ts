import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { responseValidators } from '../gen/validators.cjs';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { until } from './support/expect';
import { checkNow as checkMonitorNow, makeDue } from './support/monitors';
import { tempDir } from './support/child';

// The engine end to end: a monitor created through the API is checked by the
// worker, its status moves, incidents open and resolve by themselves, the
// roll-ups feed history and graphs.

let server: TestServer;
let api: ApiClient;
let workspaceId: string;
let target: http.Server;
let targetUrl: string;
let targetStatus = 200;
// Every process sharing a database shares the master key.
const MASTER_KEY = randomBytes(32).toString('base64');

function ok<T = any>(op: string, r: { status: number; body: T }): T {
  if (r.status >= 300) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
  const v = responseValidators[op];
  if (!v(r.body)) throw new Error(`${op} response does not match the contract: ${JSON.stringify(v.errors)}`);
  return r.body;
}

/** Makes a monitor due now and waits until the worker has checked it once more (test/support/monitors.ts). */
const checkNow = (id: string) => checkMonitorNow(server, api, id);

async function httpMonitor(name: string, extra: Record<string, unknown> = {}) {
  const body = ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId, intervalSeconds: 300, config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 5 }), ...extra,
  }));
  return body.data.id as string;
}

beforeAll(async () => {
  target = http.createServer((req, res) => { res.statusCode = req.url?.includes('/always-up') ? 200 : targetStatus; res.end('hello'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', MASTER_KEY, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
  workspaceId = org.workspaceId;
});
afterAll(async () => {
  await server.close();
  await new Promise((r) => target.close(r));
});
beforeEach(() => { targetStatus = 200; });

test('pending until the first check, then up with timings and uptime', async () => {
  const id = await httpMonitor('first');
  const created = ok('getMonitor', await api.get(`/monitors/${id}`)).data;
  expect(created.status).toBe('pending');
  const m = await checkNow(id);
  expect(m.status).toBe('up');
  expect(m.lastCheckedAt).not.toBeNull();
  expect(m.lastResponseTimeMs).toEqual(expect.any(Number));
  expect(m.lastMessage).toMatch(/200/);
  expect(m.uptime24h).toBe(100);
  expect(m.uptime30d).toBe(100);
  expect(new Date(m.statusSince).getTime()).toBeGreaterThan(new Date(created.statusSince).getTime() - 1);
  expect(JSON.stringify(m)).not.toMatch(/region/i);
});

test('down after `confirmations` failures opens an incident; recovery resolves it; every step is on the timeline', async () => {
  const id = await httpMonitor('flaky', { confirmations: 2 });
  await checkNow(id);
  targetStatus = 503;
  expect((await checkNow(id)).status).toBe('up');
  const down = await checkNow(id);
  expect(down.status).toBe('down');
  expect(down.openIncidentId).toEqual(expect.any(String));
  const inc = ok('getIncident', await api.get(`/incidents/${down.openIncidentId}`)).data;
  expect(inc).toMatchObject({ monitorId: id, monitorName: 'flaky', status: 'open', severity: 'critical', cause: 'assertion_failed', resolvedAt: null, durationSeconds: null, rootIncidentId: null, workspaceId, postmortem: null });
  const summary = ok('getSummary', await api.get('/summary')).data;
  expect(summary.down).toBeGreaterThanOrEqual(1);
  expect(summary.openIncidents).toBeGreaterThanOrEqual(1);
  expect(ok('listIncidents', await api.get('/incidents?open=true')).data.map((i: any) => i.id)).toContain(inc.id);

  targetStatus = 200;
  const up = await checkNow(id);
  expect(up.status).toBe('up');
  expect(up.openIncidentId).toBeNull();
  const resolved = ok('getIncident', await api.get(`/incidents/${inc.id}`)).data;
  expect(resolved.status).toBe('resolved');
  expect(resolved.resolvedAt).not.toBeNull();
  expect(resolved.durationSeconds).toBeGreaterThanOrEqual(0);
  const events = ok('listIncidentEvents', await api.get(`/incidents/${inc.id}/events`)).data;
  expect(events.map((e: any) => e.kind)).toEqual(['opened', 'resolved']);
  expect(events[1]).toMatchObject({ fromStatus: 'open', toStatus: 'resolved' });
  expect(ok('listIncidents', await api.get('/incidents?status=resolved')).data.map((i: any) => i.id)).toContain(inc.id);
  expect(ok('listIncidents', await api.get('/incidents?status=bogus&limit=1000')).data.length).toBeGreaterThan(0);
});

test('a dependant failing while its dependency is down is suppressed, pointing at the root incident', async () => {
  const parent = await httpMonitor('parent');
  const child = await httpMonitor('child', { dependsOn: [parent] });
  // Their first checks (due at creation) are done while the target is up, so
  // none of them can judge the child before the parent is known down.
  await checkNow(parent);
  await checkNow(child);
  targetStatus = 500;
  const p = await checkNow(parent);
  const c = await checkNow(child);
  expect(c.status).toBe('down');
  const inc = ok('getIncident', await api.get(`/incidents/${c.openIncidentId}`)).data;
  expect(inc.status).toBe('suppressed');
  expect(inc.rootIncidentId).toBe(p.openIncidentId);
  const summary = ok('getSummary', await api.get('/summary')).data;
  expect(summary.suppressedIncidents).toBeGreaterThanOrEqual(1);
  expect(ok('listIncidentEvents', await api.get(`/incidents/${inc.id}/events`)).data.map((e: any) => e.kind)).toEqual(['opened', 'suppressed']);
  targetStatus = 200;
  await checkNow(parent);
  await checkNow(child);
});

test('paused and disabled monitors are not checked', async () => {
  const paused = await httpMonitor('paused');
  const disabled = await httpMonitor('disabled');
  ok('updateMonitor', await api.patch(`/monitors/${paused}`, { paused: true }));
  ok('updateMonitor', await api.patch(`/monitors/${disabled}`, { enabled: false }));
  // Either may have had its first check right after creation; none may follow now.
  await new Promise((r) => setTimeout(r, 400));
  const count = async () => Number((await server.db.selectFrom('check_results').select((eb) => eb.fn.countAll<number>().as('n')).where('monitor_id', 'in', [paused, disabled]).executeTakeFirstOrThrow()).n);
  const before = await count();
  await makeDue(server.db, [paused, disabled]);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await count()).toBe(before);
  expect(ok('getMonitor', await api.get(`/monitors/${paused}`)).data.status).toBe('paused');
});

test('heartbeat: ping URL, success and /fail pings, silence past the grace is down', async () => {
  const hb = ok('createMonitor', await api.post('/monitors', { name: 'nightly', kind: 'heartbeat', workspaceId, intervalSeconds: 3600, config: JSON.stringify({ graceSeconds: 60 }) })).data.id;
  const url = ok('getMonitorPushUrl', await api.get(`/monitors/${hb}/push-url`)).data.url as string;
  expect(url).toMatch(/\/ping\/hb_[A-Za-z0-9_-]{43}$/);
  expect(ok('getMonitorPushUrl', await api.get(`/monitors/${await httpMonitor('no-ping')}/push-url`)).data.url).toBeNull();

  // A ping is answered once buffered; the worker applies it within a second.
  const becomes = (status: string) => until(`${hb} ${status}`, async () => {
    const m = ok('getMonitor', await api.get(`/monitors/${hb}`)).data;
    return m.status === status && m;
  }, 10_000);
  expect((await fetch(url)).status).toBe(200);
  await becomes('up');
  expect((await fetch(`${url}/start`, { method: 'POST', body: 'starting' })).status).toBe(200);
  expect((await fetch(`${url}/fail`, { method: 'HEAD' })).status).toBe(200);
  const failed = await becomes('down');
  expect(ok('getIncident', await api.get(`/incidents/${failed.openIncidentId}`)).data.cause).toBe('heartbeat_failed');
  await fetch(url, { method: 'POST' });
  await becomes('up');

  // Silence: the last ping is older than interval + grace.
  await server.db.updateTable('monitors').set({ last_ping_at: new Date(Date.now() - 2 * 3600_000) }).where('id', '=', hb).execute();
  const missed = await checkNow(hb);
  expect(missed.status).toBe('down');
  expect(ok('getIncident', await api.get(`/incidents/${missed.openIncidentId}`)).data.cause).toBe('heartbeat_missed');
  expect((await fetch(url.replace(/hb_.*/, `hb_${'x'.repeat(43)}`))).status).toBe(404);
  // The token is stored sealed and hashed, never in clear.
  const row = await server.db.selectFrom('monitors').select(['heartbeat_token_enc', 'config_enc']).where('id', '=', hb).executeTakeFirstOrThrow();
  expect(row.heartbeat_token_enc).not.toContain(url.split('/').pop());
});

test('history and graphs come from the roll-ups, every hour present', async () => {
  const id = await httpMonitor('graphed');
  await checkNow(id);
  targetStatus = 500;
  await checkNow(id);
  const graph = ok('getMonitorGraph', await api.get(`/monitors/${id}/graph`)).data;
  expect(graph.type).toBe('uptime');
  expect(graph.uptime).toHaveLength(24);
  const last = graph.uptime[23];
  expect(last.checks).toBe(2);
  expect(last.ratio).toBe(0.5);
  expect(last.avgResponseTimeMs).toEqual(expect.any(Number));
  expect(graph.uptime[0]).toMatchObject({ checks: 0, ratio: null });
  expect(ok('getMonitorGraph', await api.get(`/monitors/${id}/graph?hours=1000`)).data.uptime).toHaveLength(168);
  const all = ok('listMonitorGraphs', await api.get('/monitors/graphs?hours=3')).data;
  expect(all.find((g: any) => g.monitorId === id).uptime).toHaveLength(3);
  const history = ok('getMonitorHistory', await api.get(`/monitors/${id}/history`)).data;
  expect(history.days).toHaveLength(30);
  expect(history.days[29]).toMatchObject({ date: new Date().toISOString().slice(0, 10), checks: 2, failures: 1, uptime: 50 });
  expect(history.days[0]).toMatchObject({ checks: 0, uptime: null });
  expect(ok('getMonitorHistory', await api.get(`/monitors/${id}/history?days=100000`)).data.days).toHaveLength(1095);

  ok('deleteMonitor', await api.delete(`/monitors/${id}`));
  const left = await sql<{ n: number }>`select (select count(*) from check_results where monitor_id = ${id}) + (select count(*) from rollup_hourly where monitor_id = ${id}) + (select count(*) from rollup_daily where monitor_id = ${id}) as n`.execute(server.db);
  expect(Number(left.rows[0].n)).toBe(0);
  targetStatus = 200;
});

test('two workers on one database share the work: every due monitor checked exactly once', async () => {
  const dir = tempDir('vigil-w2-');
  const second = await startServer(loadConfig({ DATABASE_URL: server.databaseUrl, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER: 'true', MASTER_KEY }), createLogger('silent'));
  try {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await httpMonitor(`always-up-${i}`));
    await until('all checked', async () => {
      const n = await server.db.selectFrom('monitors').select((eb) => eb.fn.countAll<number>().as('n')).where('id', 'in', ids).where('last_checked_at', 'is not', null).executeTakeFirstOrThrow();
      return Number(n.n) === ids.length;
    });
    await new Promise((r) => setTimeout(r, 500));
    const counts = await server.db.selectFrom('check_results').select(['monitor_id', (eb) => eb.fn.countAll<number>().as('n')]).where('monitor_id', 'in', ids).groupBy('monitor_id').execute();
    expect(counts).toHaveLength(ids.length);
    expect(counts.every((c) => Number(c.n) === 1)).toBe(true);
  } finally {
    await second.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a check claimed by a worker that died is picked up once its lease expires', async () => {
  const id = await httpMonitor('orphan');
  const lastChecked = async () => (await server.db.selectFrom('monitors').select('last_checked_at').where('id', '=', id).executeTakeFirstOrThrow()).last_checked_at?.getTime() ?? null;
  // A new monitor is due at once: let its first check finish so that the lease
  // written below cannot race a claim already in flight.
  await until('the first check', lastChecked);
  const first = await lastChecked();
  // A "dead" worker holds the lease of a due monitor.
  await server.db.updateTable('monitor_schedule').set({ next_due_at: new Date(Date.now() - 5000), lease_until: new Date(Date.now() + 60_000) }).where('monitor_id', '=', id).execute();
  await new Promise((r) => setTimeout(r, 1000));
  expect(await lastChecked()).toBe(first);
  await server.db.updateTable('monitor_schedule').set({ lease_until: new Date(Date.now() - 1000) }).where('monitor_id', '=', id).execute();
  await until('the orphaned check', async () => (await lastChecked()) !== first);
});
