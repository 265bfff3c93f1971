import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { until } from './support/expect';
import { freshDatabase } from './support/harness';
import { ROOT, spawnTracked, startChild, type ChildServer } from './support/child';

// SIGTERM under load: readiness fails, requests in flight finish, no client
// sees a reset or a 5xx; the worker stops claiming, checks still running at
// the grace are cut short and handed back — another worker runs them within
// a second, and no check is lost or recorded twice.

const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');
// Far longer than the worker's grace (2 s) plus the time a second worker takes to start on a loaded machine: the
// slow checks A runs are still running when the grace ends, so they are cut short and handed back.
const SLOW_MS = 15_000;
let database: { url: string; drop: () => Promise<void> };
let db: pg.Client;
let target: http.Server;
let targetUrl: string;
const slowArrivals: number[] = [];

function startWorker(env: Record<string, string>): Promise<{ child: ChildProcess; exited: Promise<number | null> }> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/worker-main.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return until('the worker', async () => /worker started/.test(out), 30_000).then(() => ({ child, exited }));
}

interface Load { ok: number; refused: number; failures: string[]; stop(): Promise<void> }
/** `loops` clients reading in a tight loop over keep-alive connections, until the server refuses connections. */
function load(url: string, key: string, loops: number): Load {
  const agent = new http.Agent({ keepAlive: true, maxSockets: loops });
  const state: Load = { ok: 0, refused: 0, failures: [], stop: async () => { running = false; await Promise.all(workers); agent.destroy(); } };
  let running = true;
  const once = () => new Promise<void>((resolve) => {
    const req = http.get(`${url}/api/v1/monitors`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) state.ok++;
        else state.failures.push(`HTTP ${res.statusCode}`);
        resolve();
      });
      res.on('error', (e) => { state.failures.push(`response: ${e.message}`); resolve(); });
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNREFUSED') { state.refused++; running = false; } else state.failures.push(`${e.code ?? ''} ${e.message}`);
      resolve();
    });
  });
  const workers = Array.from({ length: loops }, async () => { while (running) await once(); });
  return state;
}

beforeAll(async () => {
  target = http.createServer((req, res) => {
    if (req.url?.startsWith('/slow')) {
      slowArrivals.push(Date.now());
      setTimeout(() => res.end('slow'), SLOW_MS).unref();
    } else res.end('fast');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  database = await freshDatabase();
  db = new pg.Client({ connectionString: database.url });
});
afterAll(async () => {
  await db.end().catch(() => undefined);
  await database.drop();
  target.closeAllConnections();
  await new Promise((r) => target.close(r));
});

test('SIGTERM under load loses nothing: no reset, no 5xx, running checks handed to another worker within a second, none run twice', async () => {
  const env = { DATABASE_URL: database.url, MASTER_KEY, SHUTDOWN_TIMEOUT: '4', RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '100000', LOG_LEVEL: 'info' };
  const a: ChildServer = await startChild(env);
  const key = a.bootstrapKey!;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const ws = (await (await fetch(`${a.url}/api/v1/workspaces`, { headers: auth })).json()).data[0].id as string;
  const create = async (name: string, path: string) => {
    const res = await fetch(`${a.url}/api/v1/monitors`, {
      method: 'POST', headers: auth,
      body: JSON.stringify({ name, kind: 'http', workspaceId: ws, intervalSeconds: 5, config: JSON.stringify({ url: `${targetUrl}${path}`, timeoutSeconds: 30 }) }),
    });
    expect(res.status).toBe(201);
    return (await res.json()).data.id as string;
  };
  const fast = await Promise.all(Array.from({ length: 10 }, (_, i) => create(`fast-${i}`, `/fast/${i}`)));
  const slow = await Promise.all(Array.from({ length: 3 }, (_, i) => create(`slow-${i}`, `/slow/${i}`)));
  await db.connect();
  // The slow checks are running in A.
  await until('A runs the slow checks', async () => slowArrivals.length >= 3);
  const b = await startWorker({ ...env });

  const traffic = load(a.url, key, 8);
  await new Promise((r) => setTimeout(r, 500));
  const ready = await fetch(`${a.url}/readyz`);
  expect(ready.status).toBe(200);
  const sigterm = Date.now();
  const code = await a.stop();
  const exitedAt = Date.now();
  await traffic.stop();
  expect(code).toBe(0);
  expect(traffic.failures).toEqual([]);
  // Traffic really flowed across the shutdown (how much depends on the machine's load, not on Vigil).
  expect(traffic.ok).toBeGreaterThan(10);
  // Within the grace (4 s) plus closing the pool and the queue.
  expect(exitedAt - sigterm).toBeLessThan(7000);
  expect(a.output()).toMatch(/released the leases of checks cut short by shutdown/);
  expect(a.output()).not.toMatch(/"level":"(error|fatal)"/);

  // B took the three slow checks A handed back, within a second of A's exit.
  await until('B runs the slow checks', async () => slowArrivals.length >= 6, 10_000);
  for (const t of slowArrivals.slice(3, 6)) expect(t - exitedAt).toBeLessThan(1000);
  // Each slow check is recorded once — B's; A's cut-short runs are not results.
  await until('B records them', async () => {
    const { rows } = await db.query('select count(*)::int as n from check_results where monitor_id = any($1)', [slow]);
    return rows[0].n >= 3;
  }, SLOW_MS + 5000);
  const { rows: perSlow } = await db.query('select monitor_id, count(*)::int as n from check_results where monitor_id = any($1) group by 1', [slow]);
  expect(perSlow.map((r) => r.n)).toEqual([1, 1, 1]);
  // No fast check recorded twice: results of one monitor are at least (almost) an interval apart.
  const { rows: gaps } = await db.query(`select monitor_id, min(gap) as gap from (
      select monitor_id, extract(epoch from at - lag(at) over (partition by monitor_id order by at)) as gap from check_results where monitor_id = any($1)
    ) g where gap is not null group by 1`, [fast]);
  for (const g of gaps) expect(Number(g.gap)).toBeGreaterThan(3);
  b.child.kill('SIGTERM');
  expect(await b.exited).toBe(0);
  // Neither process left a lease behind: nothing waits two minutes for a lease to expire.
  const { rows: leased } = await db.query('select count(*)::int as n from monitor_schedule where lease_until > now()');
  expect(leased[0].n).toBe(0);
}, 90_000);
