/**
 * Check-engine benchmark — `npm run bench:checks`.
 *
 * N http monitors (interval BENCH_INTERVAL, default 30 s, first due times
 * spread evenly over one interval) point at a local target server (a child,
 * bench/checks-target.ts); one Vigil worker (a child, bench/checks-worker.ts,
 * default concurrency or CHECK_CONCURRENCY) runs them against its own database.
 * After a warm-up of one interval it measures for BENCH_DURATION seconds:
 *   - checks/s started in the window;
 *   - p50/p99 scheduling lag (check start − due time) of the checks due in the
 *     window, which are given BENCH_GRACE (5) more seconds to start;
 *   - CPU seconds per 1,000 checks of the worker process and of PostgreSQL
 *     (from /proc: the benchmark database's backends and the server's background
 *     processes; other databases' sessions are shown apart), and the worker's RSS;
 *   - missed checks: expected (N × duration / interval) minus those started,
 *     plus those that started more than one interval late (their run was lost);
 *   - results stored in each 5-second slice of the window, fewest and most:
 *     run with more monitors than the machine can check (overload) it shows
 *     that the engine keeps checking and writing at its capacity, oldest due
 *     first, with no slice without results.
 * Before the runs, a bare Node client (bench/checks-bare.ts) measures the CPU
 * of a fresh-connection request to the same target, the yardstick (target:
 * Vigil's worker + PostgreSQL within about 5× of it). Target: 10,000 monitors
 * at 30 s (333 checks/s) on 2 cores with p99 lag < 2 s and none missed. Prints
 * a markdown table and the largest N that met the target.
 *
 * Environment:
 *   BENCH_N             one N (default: 2,500, 5,000 and 10,000 in turn)
 *   BENCH_DURATION      measured seconds (60); BENCH_WARMUP seconds (one interval)
 *   BENCH_DATABASE_URL  database to use (its run's monitors are deleted after);
 *                       otherwise a fresh vigil_bench_checks_<pid>_<N> on
 *                       postgres://postgres@127.0.0.1:5432, dropped at the end
 *   BENCH_CPU_PROF      a folder: run the worker with `--cpu-prof` into it
 *   BENCH_SQL_TIMING=1  the worker prints SQL wall time by statement at the end
 *   BENCH_BARE=0        skip the bare-client yardstick
 *   BENCH_TARGET_DELAY_MS  the target answers this late (default 0)
 *   BENCH_SCENARIO      `crash`: only the crash scenario (bench/checks-crash.ts: SIGKILL of the
 *                       worker mid-check, longest gap of any monitor); `throughput`: only the
 *                       runs above; default both
 *   BENCH_VACUUM        `vacuum (analyze)` the worker's tables now and every so many
 *                       seconds (default 60 when the server has autovacuum off, standing
 *                       in for it; else 0). Without it such a server never analyses them.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startChild, type Child } from './lib';
import {
  checksDatabase, checksTable, fmt, machineBusy, meets, monitorsTable, postgresDelta, postgresSnapshot, processCpu, seedMonitors, shiftSchedule, storedBetween, storedPerWindow, vacuumEvery, type RunRow,
} from './checks-lib';
import type { BareResult } from './checks-bare';
import type { TargetReady } from './checks-target';
import type { WindowStats, WorkerReady } from './checks-worker';
import { crashRun, crashTable } from './checks-crash';

const INTERVAL = Number(process.env.BENCH_INTERVAL || 30);
const DURATION = Number(process.env.BENCH_DURATION || 60);
const WARMUP = Number(process.env.BENCH_WARMUP ?? INTERVAL);
const GRACE = Number(process.env.BENCH_GRACE ?? 5);
const MASTER_KEY = randomBytes(32);
let vacuumNote = '';

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

/** Sends `msg` to a child and waits for its answer of the same type. */
function ask<T>(c: Child<unknown>, msg: { type: string } & Record<string, unknown>): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type?: string }) => { if (m?.type === msg.type) { c.proc.off('message', on); resolve(m as T); } };
    c.proc.on('message', on);
    c.proc.send(msg);
  });
}

/** The yardstick: CPU seconds per 1,000 fresh-connection requests of a bare Node client (best of three 3-s runs, as load elsewhere only adds). */
async function bareCost(url: string): Promise<number | null> {
  if (process.env.BENCH_BARE === '0') return null;
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const b = await startChild<BareResult>('checks-bare.ts', process.env, { url, seconds: 3, concurrency: 10 });
    await new Promise((r) => (b.proc.exitCode !== null ? r(null) : b.proc.once('exit', r)));
    best = Math.min(best, (b.ready.cpu / b.ready.requests) * 1000);
  }
  console.error(`bare client: ${best.toFixed(3)} CPU s per 1,000 fresh-connection requests (best of 3)`);
  return best;
}

/** One run with `n` monitors; returns its table row. */
async function run(n: number, target: TargetReady, bare: number | null): Promise<RunRow> {
  const db = await checksDatabase(String(n));
  let client: pg.Client | undefined;
  let worker: Child<WorkerReady> | undefined;
  let org = '';
  let vacuum: { seconds: number; stop(): Promise<void> } | undefined;
  try {
    const t = Date.now();
    const seeded = await seedMonitors(db.url, MASTER_KEY, n, INTERVAL, target.url);
    org = seeded.organizationId;
    console.error(`N=${fmt(n)}: seeded in ${((Date.now() - t) / 1000).toFixed(1)} s (${db.label}); warm-up ${WARMUP} s, measuring ${DURATION} s`);
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
    worker = await startChild<WorkerReady>('checks-worker.ts', {
      ...process.env, DATABASE_URL: db.url, MASTER_KEY: MASTER_KEY.toString('base64'), BENCH_INTERVAL: String(INTERVAL), LOG_LEVEL: 'warn',
    }, undefined, prof);
    vacuum = await vacuumEvery(client);
    const start = Date.now() + 1000;
    await shiftSchedule(client, org, seeded.base, start);
    vacuumNote = vacuum.seconds ? ` Autovacuum is off on this server: the benchmark ran vacuum (analyze) on the worker's tables every ${vacuum.seconds} s instead.` : '';
    const from = start + WARMUP * 1000;
    const to = from + DURATION * 1000;
    await ask(worker, { type: 'window', from, to });
    const snap = async () => {
      const w = await ask<{ cpu: number; rss: number }>(worker!, { type: 'snap' });
      const me = process.cpuUsage();
      return { ...w, pg: postgresSnapshot(db.name), target: processCpu(target.pid), busy: machineBusy(), me: (me.user + me.system) / 1e6 };
    };
    await sleepUntil(from);
    const s0 = await snap();
    await sleepUntil(to);
    const s1 = await snap();
    await sleepUntil(to + GRACE * 1000);
    const w = await ask<WindowStats>(worker, { type: 'collect' });
    const stored = await storedBetween(client, org, from, to);
    // Overload must degrade, never stall: results keep being written in every slice of the window.
    const slices = await storedPerWindow(client, org, from, to, 5000);

    const expected = Math.floor((n * DURATION) / INTERVAL);
    const k = w.startedInWindow / 1000;
    const pgd = postgresDelta(s0.pg, s1.pg);
    const cpu = { worker: s1.cpu - s0.cpu, pg: pgd.own, pgAll: pgd.all, pgBack: pgd.backends, target: s1.target - s0.target, busy: s1.busy - s0.busy, me: s1.me - s0.me };
    const other = cpu.busy - cpu.worker - cpu.pgAll - cpu.target - cpu.me;
    const sec = w.perSecond;
    console.error(`N=${fmt(n)}: started ${fmt(w.startedInWindow)} in the window (${fmt(Math.min(...sec))}–${fmt(Math.max(...sec))}/s), ` +
      `${fmt(w.due)} of ${fmt(expected)} due in it started, ${fmt(stored)} results stored (${fmt(slices.min)}–${fmt(slices.max)} per 5 s), ${fmt(w.claims / DURATION, 1)} claims/s ` +
      `(${fmt(w.startedInWindow / Math.max(1, w.claims), 1)} checks each); lag p50 ${fmt(w.p50)} / p99 ${fmt(w.p99)} / max ${fmt(w.max)} ms\n` +
      `  CPU s in the window: worker ${cpu.worker.toFixed(1)}, PostgreSQL ${cpu.pg.toFixed(1)} (backends ${cpu.pgBack.toFixed(1)}; ${Math.max(0, cpu.pgAll - cpu.pg).toFixed(1)} more for other databases), ` +
      `target ${cpu.target.toFixed(1)}, other processes ${other.toFixed(1)} (machine busy ${fmt((100 * cpu.busy) / (DURATION * os.cpus().length))}% of ${os.cpus().length} cores); ` +
      `worker RSS ${fmt(s0.rss / 2 ** 20)} → ${fmt(s1.rss / 2 ** 20)} MB; ${await monitorsTable(client)}` +
      (vacuum.seconds ? ` (vacuumed every ${vacuum.seconds} s)` : ''));
    return {
      n, interval: INTERVAL, concurrency: worker.ready.concurrency, checksPerSec: w.startedInWindow / DURATION, p50: w.p50 ?? NaN, p99: w.p99 ?? NaN,
      workerPer1k: cpu.worker / k, pgPer1k: cpu.pg / k, rssMb: s1.rss / 2 ** 20, missed: Math.max(0, expected - w.due) + w.late, late: w.late, bare,
    };
  } finally {
    await vacuum?.stop();
    await worker?.stop();
    if (client && !db.fresh && org) await client.query('delete from monitors where organization_id = $1', [org]).catch(() => undefined);
    await client?.end().catch(() => undefined);
    await db.drop().catch((e) => console.error(`dropping the bench database: ${(e as Error).message}`));
  }
}

async function main(): Promise<void> {
  const sizes = process.env.BENCH_N ? [Number(process.env.BENCH_N)] : [2500, 5000, 10000];
  const target = await startChild<TargetReady>('checks-target.ts', process.env);
  const rows: RunRow[] = [];
  const scenario = process.env.BENCH_SCENARIO ?? 'both';
  let crash: Awaited<ReturnType<typeof crashRun>> | null = null;
  try {
    if (scenario !== 'crash') {
      const bare = await bareCost(target.ready.url);
      for (const n of sizes) rows.push(await run(n, target.ready, bare));
    }
    if (scenario !== 'throughput') crash = await crashRun(target.ready, MASTER_KEY);
  } finally {
    await target.stop();
  }
  if (crash) console.log(`\nCrash (SIGKILL of the worker mid-check, a new one started at once):\n\n${crashTable(crash)}\n`);
  if (rows.length === 0) return;
  const cpus = os.cpus();
  console.log(`\n${checksTable(rows)}\n`);
  console.log(`Node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${os.platform()} ${os.release()}; ` +
    `interval ${INTERVAL} s, warm-up ${WARMUP} s, ${DURATION} s measured per N; target answers ${process.env.BENCH_TARGET_DELAY_MS ? `after ${process.env.BENCH_TARGET_DELAY_MS} ms` : 'at once'}; PostgreSQL CPU = this database's backends + the server's background processes.` +
    (rows[0]?.bare ? ` Bare client: ${rows[0].bare.toFixed(3)} CPU s per 1,000 fresh-connection requests.` : '') + vacuumNote);
  const ok = rows.filter(meets).map((r) => r.n);
  console.log(ok.length ? `Largest N meeting the target (p99 lag < 2 s, none missed): ${fmt(Math.max(...ok))}` : 'No N met the target (p99 lag < 2 s, none missed).');
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
