/**
 * Heartbeat-ping benchmark — `npm run bench:pings`.
 *
 * Vigil (child, bench/pings-vigil.ts, as `npm start` runs it: the ping
 * endpoint and the worker draining the ping buffer in one process; with
 * BENCH_WORKER=separate a server without worker plus `npm run worker`) on a
 * fresh database. BENCH_MONITORS (500) heartbeat monitors are created through
 * the API and their ping URLs read from `GET /monitors/{id}/push-url`; then
 * autocannon (BENCH_CONNECTIONS connections, pipelining 1) sends GETs to
 * those URLs (each request the next URL, round-robin) for BENCH_DURATION
 * seconds after a warm-up.
 *
 * Prints accepted pings/s, p50/p99 latency, non-2xx, Vigil's CPU per 1,000
 * pings (utime+stime from /proc) and its RSS, PostgreSQL's and this client's
 * CPU. During the load it measures how long a ping takes to change a
 * monitor's status (four probe monitors outside the load, flipped down/up by
 * `/fail` and success pings every few seconds; status polled from the
 * database every 10 ms). After the load it waits until the buffer is empty
 * and verifies that none was lost: the pings the drain counted
 * (`ingest_drained`) equal the 2xx answers (a request cut off by the end of
 * the run may have been stored unanswered, so at most one per connection
 * more), then pings every monitor once more and checks its last ping is that
 * one. Targets (2 cores): ≥ 10,000 pings/s with p99 < 50 ms, status within a
 * second, none lost.
 *
 * Environment:
 *   BENCH_DURATION     seconds of measured load (15); BENCH_WARMUP seconds before it (3)
 *   BENCH_CONNECTIONS  autocannon connections (64)
 *   BENCH_MONITORS     heartbeat monitors pinged (500)
 *   BENCH_WORKER       inline (default) or separate (a worker process drains the buffer)
 *   BENCH_DATABASE_URL database to use (left as is); otherwise a fresh vigil_bench_<pid> on
 *                      postgres://postgres@127.0.0.1:5432, dropped at the end
 *   BENCH_CPU_PROF     a folder: run the Vigil child with `--cpu-prof` into it
 *   BENCH_SQL_TIMING=1 print the server's SQL wall time by statement over the measured load
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { api, ask, benchDatabase, memKb, startChild, type Child } from './lib';
import { machineBusy, postgresDelta, postgresSnapshot, processCpu } from './checks-cpu';
import type { PingsVigilReady } from './pings-vigil';
import type { SqlTime } from './sqlTiming';

const DURATION = Number(process.env.BENCH_DURATION || 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 64);
const MONITORS = Number(process.env.BENCH_MONITORS || 500);
const WORKER = process.env.BENCH_WORKER || 'inline';
const PROBES = 4;
const TARGET_RATE = 10_000;
const TARGET_P99 = 50;
const TARGET_STATUS_MS = 1000;
const MASTER_KEY = randomBytes(32).toString('base64');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const n0 = (n: number) => Math.round(n).toLocaleString('en-US');
const n1 = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

function cpuNow(pids: number[], db: string) {
  const me = process.cpuUsage();
  return { t: performance.now(), vigil: pids.reduce((a, p) => a + processCpu(p), 0), pg: postgresSnapshot(db), me: (me.user + me.system) / 1e6, busy: machineBusy() };
}
type Cpu = ReturnType<typeof cpuNow>;
function cpuDelta(a: Cpu, b: Cpu) {
  const pgs = postgresDelta(a.pg, b.pg).own;
  const busy = b.busy - a.busy;
  return { s: (b.t - a.t) / 1000, vigil: b.vigil - a.vigil, pg: pgs, me: b.me - a.me, busy, other: busy - (b.vigil - a.vigil) - pgs - (b.me - a.me) };
}

const drainedCount = async (c: pg.Client) => Number((await c.query(`select coalesce((select items from ingest_drained where buffer = 'heartbeat_pings'), 0)::bigint as n`)).rows[0].n);
const bufferedCount = async (c: pg.Client) => Number((await c.query('select count(*)::int as n from heartbeat_pings')).rows[0].n);

/** Pings `url` (`/fail` when `fail`) and polls the monitor's status every 10 ms until it is `status`: ms from the send. */
async function statusLatency(c: pg.Client, url: string, id: string, fail: boolean, status: string, timeoutMs = 10_000): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(fail ? `${url}/fail` : url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`probe ping: ${res.status}`);
  for (;;) {
    const { rows: [r] } = await c.query('select status from monitors where id = $1', [id]);
    if (r.status === status) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) return Infinity;
    await sleep(10);
  }
}

interface Load { result: autocannon.Result; acked: number[] }

/** autocannon over every monitor's ping URL, round-robin over all connections (each request takes the next URL). */
async function load(base: string, paths: string[], seconds: number): Promise<Load> {
  const acked = paths.map(() => 0);
  let next = 0;
  const requests = [{
    method: 'GET' as const,
    setupRequest: (req: autocannon.Request, context: { i?: number }) => {
      const i = next++ % paths.length;
      context.i = i;
      return { ...req, path: paths[i] };
    },
    onResponse: (status: number, _body: string, context: { i?: number }) => { if (status === 200 && context.i !== undefined) acked[context.i]++; },
  }];
  const result = await autocannon({ url: base, connections: CONNECTIONS, pipelining: 1, duration: seconds, requests: requests as autocannon.Request[] });
  return { result, acked };
}

async function main(): Promise<void> {
  if (!['inline', 'separate'].includes(WORKER)) throw new Error('BENCH_WORKER is inline or separate');
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:pings needs PostgreSQL: set BENCH_DATABASE_URL or run one on 127.0.0.1:5432');
  const dbName = new URL(db.url).pathname.slice(1);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-pings-'));
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
  const env = { ...process.env, DATABASE_URL: db.url, MASTER_KEY, DATA_DIR: dataDir };
  const c = new pg.Client({ connectionString: db.url });
  let vigil: Child<PingsVigilReady> | undefined;
  let worker: ChildProcess | undefined;
  try {
    vigil = await startChild<PingsVigilReady>('pings-vigil.ts', { ...env, WORKER: WORKER === 'inline' ? 'true' : 'false' }, undefined, prof);
    const v = vigil.ready;
    await c.connect();
    if (WORKER === 'separate') {
      worker = spawn(process.execPath, [...prof, '--import', 'tsx', path.join(__dirname, '../src/worker-main.ts')], { env: { ...env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'] });
    }

    // The monitors: MONITORS under load, PROBES outside it for the status latency.
    const t = performance.now();
    const made: { id: string; url: string }[] = [];
    for (let i = 0; i < MONITORS + PROBES; i += 20) {
      made.push(...await Promise.all(Array.from({ length: Math.min(20, MONITORS + PROBES - i) }, async (_, k) => {
        const m = await api<{ id: string }>(v, 'POST', '/monitors', {
          name: `job-${i + k}`, kind: 'heartbeat', workspaceId: v.workspaceId, intervalSeconds: 60, config: JSON.stringify({ graceSeconds: 300 }),
        });
        return { id: m.id, url: (await api<{ url: string }>(v, 'GET', `/monitors/${m.id}/push-url`)).url };
      })));
    }
    const monitors = made.slice(0, MONITORS);
    const probes = made.slice(MONITORS);
    console.error(`created ${made.length} heartbeat monitors in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const base = new URL(monitors[0].url).origin;
    const paths = monitors.map((m) => new URL(m.url).pathname);
    // Probes start down (a /fail ping each).
    for (const p of probes) await statusLatency(c, p.url, p.id, true, 'down');

    const before = await drainedCount(c);
    const warm = WARMUP > 0 ? await load(base, paths, WARMUP) : null;

    // The measured load, with status-latency probes every few seconds during it.
    const sqlTiming = process.env.BENCH_SQL_TIMING === '1';
    if (sqlTiming) await ask(vigil, { type: 'sql' });
    const pids = [v.pid, ...(worker?.pid ? [worker.pid] : [])];
    const c0 = cpuNow(pids, dbName);
    const running = load(base, paths, DURATION);
    const flips: { ms: number; to: string }[] = [];
    const probing = (async () => {
      await sleep(2000);
      for (let i = 0; performance.now() - c0.t < (DURATION - 2) * 1000; i++) {
        const p = probes[i % PROBES];
        const up = Math.floor(i / PROBES) % 2 === 0; // down -> up first, then up -> down
        flips.push({ ms: await statusLatency(c, p.url, p.id, !up, up ? 'up' : 'down'), to: up ? 'up' : 'down' });
        await sleep(Math.max(0, 1500 - (flips.at(-1)!.ms === Infinity ? 0 : flips.at(-1)!.ms)));
      }
    })();
    const m = await running;
    const c1 = cpuNow(pids, dbName);
    await probing;
    const rss = memKb(v.pid, 'VmRSS');
    const hwm = memKb(v.pid, 'VmHWM');
    const top = sqlTiming ? (await ask<{ top: SqlTime[] }>(vigil, { type: 'sql' })).top : [];
    const backlog = await bufferedCount(c);

    // None lost: wait until the buffer is empty, compare the drained count with the answers.
    const d0 = performance.now();
    while ((await bufferedCount(c)) > 0 && performance.now() - d0 < 60_000) await sleep(50);
    const drainMs = performance.now() - d0;
    const probePings = PROBES + flips.length;
    const acked = (warm?.result['2xx'] ?? 0) + m.result['2xx'] + probePings;
    const processed = (await drainedCount(c)) - before;
    const extra = processed - acked;
    const none = extra >= 0 && extra <= 2 * CONNECTIONS && (await bufferedCount(c)) === 0;
    const perMonitorAcked = monitors.map((_, i) => (warm?.acked[i] ?? 0) + m.acked[i]);

    // Every monitor's last ping is its latest: one more ping each, sequentially, then compare.
    const finals = new Map<string, { sent: number; got: number }>();
    for (const mon of monitors) {
      const sent = Date.now();
      const res = await fetch(mon.url);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`final ping: ${res.status}`);
      finals.set(mon.id, { sent, got: Date.now() });
    }
    while ((await bufferedCount(c)) > 0) await sleep(50);
    await sleep(200);
    const { rows } = await c.query('select id, status, last_ping_at from monitors where id = any($1)', [monitors.map((x) => x.id)]);
    const wrong = rows.filter((r) => {
      const f = finals.get(r.id)!;
      const at = (r.last_ping_at as Date | null)?.getTime() ?? 0;
      return at < f.sent || at > f.got || r.status !== 'up';
    });

    // Report.
    const r = m.result;
    const ok2xx = r['2xx'];
    const rate = ok2xx / r.duration;
    const cpu = cpuDelta(c0, c1);
    const bad = r.non2xx + r.errors + r.timeouts;
    const finite = flips.filter((f) => Number.isFinite(f.ms)).map((f) => f.ms).sort((a, b) => a - b);
    const worst = flips.length ? Math.max(...flips.map((f) => f.ms)) : Infinity;
    const cpus = os.cpus();
    console.log(`\nHeartbeat pings, ${DURATION} s after a ${WARMUP} s warm-up, ${CONNECTIONS} connections over ${MONITORS} monitors; ` +
      `drain ${WORKER === 'inline' ? 'in the server process (as npm start)' : 'in a separate worker process'}`);
    console.log(`Accepted: ${n0(ok2xx)} pings in ${r.duration.toFixed(1)} s = ${n0(rate)} pings/s ` +
      `(per second min ${n0(r.requests.min)}, max ${n0(r.requests.max)}); per monitor ${n0(Math.min(...perMonitorAcked))}–${n0(Math.max(...perMonitorAcked))}`);
    console.log(`Latency: p50 ${r.latency.p50} ms, p90 ${r.latency.p90} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms`);
    console.log(`Non-2xx: ${r.non2xx}, errors: ${r.errors}, timeouts: ${r.timeouts}${warm ? ` (warm-up: ${warm.result.non2xx + warm.result.errors + warm.result.timeouts})` : ''}`);
    console.log(`Vigil CPU: ${n1(cpu.vigil)} s over ${cpu.s.toFixed(1)} s = ${n0((1000 * cpu.vigil) / Math.max(1, ok2xx) * 1000)} ms per 1,000 pings ` +
      `(${Math.round((100 * cpu.vigil) / cpu.s)}% of a core${WORKER === 'inline' ? ', draining included' : ', server and worker'}); RSS ${n0(rss / 1024)} MB (peak ${n0(hwm / 1024)} MB)`);
    console.log(`Elsewhere during the load: PostgreSQL ${n1(cpu.pg)} s (${n0((1000 * cpu.pg) / Math.max(1, ok2xx) * 1000)} ms per 1,000 pings), autocannon (this process) ${n1(cpu.me)} s, ` +
      `other processes ${n1(cpu.other)} s; machine busy ${Math.round((100 * cpu.busy) / (cpu.s * cpus.length))}% of ${cpus.length} cores`);
    console.log(`Status within: ${flips.length} flips under load (down→up by a success ping, up→down by /fail): ` +
      `median ${finite.length ? n0(finite[finite.length >> 1]) : '—'} ms, max ${Number.isFinite(worst) ? n0(worst) : 'NEVER'} ms`);
    console.log(`Drain: ${n0(backlog)} pings buffered when the load ended, empty ${(drainMs / 1000).toFixed(2)} s later`);
    console.log(`Verification: ${n0(acked)} pings answered 2xx (warm-up and probes included), ${n0(processed)} drained — ` +
      `${extra === 0 ? 'equal' : extra > 0 ? `${n0(extra)} more (sent before the run ended, not answered)` : `${n0(-extra)} LOST`}; ` +
      `last ping of every monitor is its latest: ${wrong.length === 0 ? 'yes' : `NO for ${wrong.length}`}`);
    if (top.length) {
      console.log(`Vigil's SQL wall time over the load (summed over connections), by statement:`);
      for (const q of top) console.log(`  ${(q.ms / 1000).toFixed(2).padStart(7)} s ${String(q.n).padStart(7)}× ${(q.ms / q.n).toFixed(2).padStart(7)} ms  ${q.text}`);
    }
    console.log(`Node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM; ` +
      `database: ${db.label}; Vigil, PostgreSQL and autocannon share the machine (load average before the run ${os.loadavg()[0].toFixed(1)})`);
    const statusOk = worst <= TARGET_STATUS_MS;
    console.log(`Targets: ≥ ${n0(TARGET_RATE)} pings/s: ${rate >= TARGET_RATE ? 'met' : 'MISSED'} (${n0(rate)}); p99 < ${TARGET_P99} ms: ${r.latency.p99 < TARGET_P99 ? 'met' : 'MISSED'} (${r.latency.p99} ms); ` +
      `status within ${TARGET_STATUS_MS} ms: ${statusOk ? 'met' : 'MISSED'} (max ${Number.isFinite(worst) ? n0(worst) : 'never'} ms); none lost: ${none && wrong.length === 0 ? 'met' : 'MISSED'}; non-2xx: ${bad}`);
    if (!none || wrong.length > 0 || bad > 0) process.exitCode = 1;
  } finally {
    await c.end().catch(() => undefined);
    if (worker && worker.exitCode === null) {
      await new Promise<void>((r) => { const k = setTimeout(() => worker!.kill('SIGKILL'), 15_000); worker!.once('exit', () => { clearTimeout(k); r(); }); worker!.kill('SIGTERM'); });
    }
    await vigil?.stop();
    await db.drop().catch((e) => console.error(`dropping the bench database: ${(e as Error).message}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
