/**
 * The crash scenario of `npm run bench:checks` (BENCH_SCENARIO=crash, or
 * after the throughput runs): BENCH_CRASH_N (2,000) http monitors at
 * BENCH_CRASH_INTERVAL (10) s against the target (answering after
 * BENCH_TARGET_DELAY_MS, so checks are in flight at any moment), one worker;
 * after one interval of warm-up the worker gets SIGKILL mid-check and a new
 * one starts at once. From the stored results: for every monitor, the gap
 * between its last check started before the kill and its first started
 * after; the longest gap, its p99, and how many monitors exceeded interval +
 * restart time + 6 s (the 5 s lease and a second). Before the short renewed lease, the monitors in flight
 * at the kill waited out a 120 s lease.
 */
import pg from 'pg';
import { startChild, type Child } from './lib';
import { checksDatabase, fmt, seedMonitors, shiftSchedule } from './checks-lib';
import type { TargetReady } from './checks-target';
import type { WorkerReady } from './checks-worker';

export interface CrashRow { n: number; interval: number; inFlight: number; restartMs: number; longest: number; p99: number; over: number; over10: number; never: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function crashRun(target: TargetReady, masterKey: Buffer): Promise<CrashRow> {
  const n = Number(process.env.BENCH_CRASH_N || 2000);
  const interval = Number(process.env.BENCH_CRASH_INTERVAL || 10);
  const db = await checksDatabase(`crash_${n}`);
  const client = new pg.Client({ connectionString: db.url });
  let worker: Child<WorkerReady> | undefined;
  try {
    const seeded = await seedMonitors(db.url, masterKey, n, interval, target.url);
    await client.connect();
    const env = { ...process.env, DATABASE_URL: db.url, MASTER_KEY: masterKey.toString('base64'), BENCH_INTERVAL: String(interval), LOG_LEVEL: 'warn' };
    worker = await startChild<WorkerReady>('checks-worker.ts', env);
    await shiftSchedule(client, seeded.organizationId, seeded.base, Date.now() + 500);
    await sleep((interval + 2) * 1000);
    const { rows: [held] } = await client.query('select count(*)::int as n from monitor_schedule where monitor_id in (select id from monitors where organization_id = $1) and lease_until > now()', [seeded.organizationId]);
    const killedAt = Date.now();
    worker.proc.kill('SIGKILL');
    await new Promise((r) => worker!.proc.once('exit', r));
    worker = await startChild<WorkerReady>('checks-worker.ts', env);
    const restartMs = Date.now() - killedAt;
    console.error(`crash: N=${fmt(n)} at ${interval} s, killed with ${fmt(held.n)} claims held; new worker ready in ${fmt(restartMs)} ms; watching ${3 * interval} s`);
    await sleep(3 * interval * 1000);
    const { rows: [g] } = await client.query(`
      with before as (select monitor_id, max(at) as t from check_results where organization_id = $1 and at < to_timestamp($2 / 1000.0) group by 1),
           after as (select monitor_id, min(at) as t from check_results where organization_id = $1 and at >= to_timestamp($2 / 1000.0) group by 1),
           gaps as (select b.monitor_id, extract(epoch from a.t - b.t) as gap from before b left join after a using (monitor_id))
      select max(gap)::float8 as longest, percentile_cont(0.99) within group (order by gap)::float8 as p99,
             count(*) filter (where gap > $3)::int as over, count(*) filter (where gap > $4)::int as over10,
             count(*) filter (where gap is null)::int as never from gaps`,
    [seeded.organizationId, killedAt, interval + restartMs / 1000 + 6, interval + 10]);
    return { n, interval, inFlight: held.n, restartMs, longest: g.longest, p99: g.p99, over: g.over, over10: g.over10, never: g.never };
  } finally {
    await worker?.stop();
    await client.end().catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

export function crashTable(r: CrashRow): string {
  return ['| Monitors | Interval | Claims held at the kill | New worker ready | Longest gap | p99 gap | Over interval + restart + 6 s | Over interval + 10 s | Never checked again |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${fmt(r.n)} | ${r.interval} s | ${fmt(r.inFlight)} | ${(r.restartMs / 1000).toFixed(1)} s | ${r.longest.toFixed(1)} s | ${r.p99.toFixed(1)} s | ${r.over} | ${r.over10} | ${r.never} |`].join('\n');
}
