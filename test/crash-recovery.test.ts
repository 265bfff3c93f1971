import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WORKER_LEASE_SECONDS } from '../src/engine/claim';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ROOT, spawnTracked } from './support/child';

// A worker killed with SIGKILL mid-check (an OOM kill, an eviction, a power
// cut): its claims outlive it by seconds, not minutes — every monitor is
// checked again within one interval plus a few seconds of a new worker's
// start, and an outage across the crash opens exactly one incident per
// monitor. A check longer than the lease is never run twice: a living
// worker renews its claims.

const MASTER_KEY = Buffer.alloc(32, 3).toString('base64');
const INTERVAL = 5;
let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let target: http.Server;
let targetUrl: string;
let failing = false;
let inFlight = 0;
const arrivals = new Map<string, number[]>();

interface Worker { child: ChildProcess; startedAt: number; exited: Promise<unknown> }
function startWorker(): Promise<Worker> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/worker-main.ts'], {
    cwd: ROOT, env: { ...process.env, DATABASE_URL: server.databaseUrl, MASTER_KEY, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise((r) => child.once('exit', r));
  return until('the worker', async () => /worker started/.test(out), 30_000).then(() => ({ child, startedAt: Date.now(), exited }));
}

async function monitors(prefix: string, n: number, path: (i: number) => string, intervalSeconds = INTERVAL) {
  return Promise.all(Array.from({ length: n }, async (_, i) => ok('createMonitor', await api.post('/monitors', {
    name: `${prefix}-${i}`, kind: 'http', workspaceId: org.workspaceId, intervalSeconds,
    config: JSON.stringify({ url: `${targetUrl}${path(i)}`, timeoutSeconds: 30 }),
  }), 201).id as string));
}

beforeAll(async () => {
  target = http.createServer((req, res) => {
    const key = req.url!.split('?')[0];
    arrivals.set(key, [...(arrivals.get(key) ?? []), Date.now()]);
    inFlight++;
    const delay = key.startsWith('/long') ? 20_000 : 1500;
    setTimeout(() => { inFlight--; res.statusCode = failing ? 503 : 200; res.end('x'); }, delay).unref();
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  // The API only: the workers are separate processes this test kills.
  server = await startTestServer({ WORKER: 'false', MASTER_KEY, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  target.closeAllConnections();
  await new Promise((r) => target.close(r));
});

test('kill -9 mid-check: every monitor is checked again within an interval plus a few seconds, and the outage opens one incident each', async () => {
  const ids = await monitors('crash', 30, (i) => `/svc/${i}`);
  const first = await startWorker();
  await until('every monitor checked once', async () => {
    const { n } = await server.db.selectFrom('monitors').select((eb) => eb.fn.countAll<string>().as('n'))
      .where('id', 'in', ids).where('last_checked_at', 'is not', null).executeTakeFirstOrThrow();
    return Number(n) === ids.length;
  }, 30_000);
  failing = true;
  // Kill while checks are in flight (their claims are held by the dying worker).
  await until('checks in flight', async () => inFlight >= 5, 15_000);
  const killedAt = Date.now();
  first.child.kill('SIGKILL');
  await first.exited;
  const second = await startWorker();

  // Each monitor's next check starts within one interval plus the lease and a little slack of the new worker's start.
  const bound = second.startedAt + (INTERVAL + WORKER_LEASE_SECONDS + 3) * 1000;
  await until('every monitor checked after the crash', async () => ids.every((_, i) => (arrivals.get(`/svc/${i}`) ?? []).some((t) => t > killedAt)), 30_000);
  const firstAfter = ids.map((_, i) => Math.min(...(arrivals.get(`/svc/${i}`) ?? []).filter((t) => t > killedAt)));
  const late = firstAfter.filter((t) => t > bound);
  expect({ late: late.length, longestSecondsAfterRestart: Math.round((Math.max(...firstAfter) - second.startedAt) / 100) / 10 }).toMatchObject({ late: 0 });

  // The outage that spans the crash opens one incident per monitor, never two.
  await until('an incident for every monitor', async () => {
    const rows = await server.db.selectFrom('incidents').select('monitor_id').where('monitor_id', 'in', ids).execute();
    return rows.length >= ids.length;
  }, 30_000);
  await new Promise((r) => setTimeout(r, 2 * INTERVAL * 1000));
  const rows = await server.db.selectFrom('incidents').select(['monitor_id', 'status']).where('monitor_id', 'in', ids).execute();
  expect(rows).toHaveLength(ids.length);
  expect(new Set(rows.map((r) => r.monitor_id)).size).toBe(ids.length);
  failing = false;
  second.child.kill('SIGTERM');
  await second.exited;
}, 120_000);

test('a check longer than the lease is not run twice while its worker lives', async () => {
  const [id] = await monitors('long', 1, () => '/long/0', 60);
  const a = await startWorker();
  const b = await startWorker();
  await until('the long check started', async () => (arrivals.get('/long/0') ?? []).length >= 1, 15_000);
  // Twice the lease and more: the claim is renewed, no other worker takes the monitor.
  await new Promise((r) => setTimeout(r, (WORKER_LEASE_SECONDS * 2 + 2) * 1000));
  expect(arrivals.get('/long/0')).toHaveLength(1);
  await until('its result', async () => (await server.db.selectFrom('monitors').select('last_checked_at').where('id', '=', id).executeTakeFirstOrThrow()).last_checked_at, 15_000);
  expect(arrivals.get('/long/0')).toHaveLength(1);
  for (const w of [a, b]) { w.child.kill('SIGTERM'); await w.exited; }
}, 90_000);
