/**
 * Child process of `npm run bench:checks` (bench/checks.ts): one Vigil worker
 * (src/engine/worker.ts) on its own event loop, instrumented through its
 * `onStart` hook. Environment: DATABASE_URL, MASTER_KEY, CHECK_CONCURRENCY
 * (default 200), BENCH_SQL_TIMING=1 to time every SQL statement (wall time
 * per statement text, printed to stderr at stop).
 *
 * IPC: sends `{ type: 'ready', pid, concurrency }`; then answers
 *   { type: 'window', from, to }  measure checks *due* in [from, to) (lag) and *started* in it (rate)
 *   { type: 'snap' }              { cpu (s, user+system), rss (bytes), started (all time) }
 *   { type: 'collect' }           the window's figures (WindowStats)
 *   { type: 'stop' }              stops the worker (so `--cpu-prof` is written) and exits.
 */
import { loadConfig } from '../src/config';
import { createSecretBox, loadMasterKey } from '../src/crypto/secrets';
import { connectDb } from '../src/db/connect';
import type { ClaimedMonitor } from '../src/engine/claim';
import { startWorker } from '../src/engine/worker';
import { createLogger } from '../src/log';
import { slowestSql, timeSql } from './sqlTiming';

export interface WorkerReady { type: 'ready'; pid: number; concurrency: number }
export interface WindowStats {
  type: 'collect'; due: number; startedInWindow: number; p50: number; p99: number; max: number; late: number;
  perSecond: number[];
  /** Non-empty claims that started checks in the window (a claim's checks start in one synchronous loop). */
  claims: number;
}


function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

async function main(): Promise<void> {
  if (process.env.BENCH_SQL_TIMING === '1') timeSql();
  const config = loadConfig(process.env);
  const { db } = connectDb(process.env.DATABASE_URL!, 10);
  const secrets = createSecretBox(loadMasterKey(config.masterKey, config.dataDir));
  let from = Infinity;
  let to = Infinity;
  let lags: number[] = [];
  let startedInWindow = 0;
  let perSecond: number[] = [];
  let claims = 0;
  let inClaim = false;
  const onStart = (m: ClaimedMonitor, at: Date) => {
    const t = at.getTime();
    const due = m.next_due_at.getTime();
    if (due >= from && due < to) lags.push(t - due);
    if (t >= from && t < to) {
      startedInWindow++;
      perSecond[Math.floor((t - from) / 1000)]++;
      if (!inClaim) { claims++; inClaim = true; queueMicrotask(() => { inClaim = false; }); }
    }
  };
  const worker = startWorker({
    db, secrets, net: { allowPrivate: true, extraCa: [] }, log: createLogger('warn'), concurrency: config.checkConcurrency, onStart,
  });

  process.on('message', (msg: { type: string; from?: number; to?: number }) => {
    if (msg.type === 'window') {
      from = msg.from!; to = msg.to!; lags = []; startedInWindow = 0; claims = 0;
      perSecond = new Array(Math.ceil((to - from) / 1000)).fill(0);
      process.send!({ type: 'window' });
    } else if (msg.type === 'snap') {
      const u = process.cpuUsage();
      process.send!({ type: 'snap', cpu: (u.user + u.system) / 1e6, rss: process.memoryUsage().rss, started: worker.started });
    } else if (msg.type === 'collect') {
      const sorted = lags.sort((a, b) => a - b);
      const interval = Number(process.env.BENCH_INTERVAL || 30) * 1000;
      process.send!({
        type: 'collect', due: sorted.length, startedInWindow, p50: percentile(sorted, 50), p99: percentile(sorted, 99),
        max: sorted.at(-1) ?? NaN, late: sorted.filter((l) => l > interval).length, perSecond, claims,
      } satisfies WindowStats);
    } else if (msg.type === 'stop') {
      void stop();
    }
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await worker.stop();
    await db.destroy();
    const rows = slowestSql(15);
    if (rows.length) {
      console.error('SQL wall time in the worker (whole run), by statement:');
      for (const { text: k, ...s } of rows) console.error(`  ${(s.ms / 1000).toFixed(1).padStart(7)} s  ${String(s.n).padStart(7)}×  ${(s.ms / s.n).toFixed(2).padStart(7)} ms  ${k}`);
    }
    process.exit(0);
  };
  process.on('disconnect', () => void stop());
  process.send!({ type: 'ready', pid: process.pid, concurrency: config.checkConcurrency } satisfies WorkerReady);
}

main().catch((e) => { console.error('checks-worker:', e); process.exit(1); });
