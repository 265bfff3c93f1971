/**
 * Alert-latency benchmark — `npm run bench:alerts`.
 *
 * Measures the time from the failing check that confirms an outage to its
 * `incident.opened` webhook arriving at a local receiver, for BENCH_N (1,000)
 * incidents. BENCH_N http monitors (confirmations 1, interval 30 s) point at a
 * local target (child, bench/alerts-target.ts) whose answer flips from 200 to
 * 500; BENCH_CHANNELS (10) shared webhook channels point at a receiver (child,
 * bench/alerts-receiver.ts) that notes Date.now() as each POST arrives. A whole
 * Vigil server (child, bench/alerts-vigil.ts: API + check worker + alerting
 * queue) runs on a fresh database. After every monitor was checked up once,
 * each scenario parks the schedule, flips the target to failing and makes the
 * monitors due again: "steady" spreads them over one 30 s interval (≈33
 * incidents/s), "burst" makes all due at once.
 *
 * Latency = arrival − incident.startedAt of the payload (same clock). startedAt
 * is when the confirming check *started*, so the figure includes the check
 * itself, the result writer's batching (≤ 100 ms), its transaction, the queue
 * pickup, the delivery's own queries and the POST. Between scenarios the target
 * recovers and the resolutions are delivered (not measured). Target: p99 < 2 s
 * on 2 cores with no webhook lost. Prints count, p50/p90/p99/max, any incident
 * whose webhook never arrived, the README table, and where the time went.
 *
 * Environment:
 *   BENCH_N (1000), BENCH_CHANNELS (10), BENCH_SCENARIOS ("steady,burst")
 *   BENCH_TIMEOUT       seconds to wait for webhooks after the last check is due (60)
 *   BENCH_DATABASE_URL  database to use (left as is); otherwise a fresh vigil_bench_<pid>
 *                       on postgres://postgres@127.0.0.1:5432, dropped at the end
 *   BENCH_CPU_PROF      a folder: run the Vigil child with `--cpu-prof` into it
 *   BENCH_SQL_TIMING=1  print Vigil's SQL wall time by statement for each scenario
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { benchDatabase, startChild, type Child } from './lib';
import { seedMonitors } from './checks-lib';
import { ask, cpuLine, cpuNow, incidentsSince, park, scheduleFrom, seedChannels, waitFor } from './alerts-lib';
import { flow, latencyTable, meets, stagesOf, stagesTable, summary, type PhaseRow } from './alerts-report';
import type { Arrival, ReceiverReady } from './alerts-receiver';
import type { TargetReady } from './alerts-target';
import type { SqlTime, VigilReady } from './alerts-vigil';

const N = Number(process.env.BENCH_N || 1000);
const CHANNELS = Number(process.env.BENCH_CHANNELS || 10);
const INTERVAL = 30;
const TIMEOUT = Number(process.env.BENCH_TIMEOUT || 60) * 1000;
const SCENARIOS: Record<string, number> = { steady: INTERVAL * 1000, burst: 0 };
const MASTER_KEY = randomBytes(32);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Rig { c: pg.Client; org: string; ids: string[]; dbName: string; target: Child<TargetReady>; receiver: Child<ReceiverReady>; vigil: Child<VigilReady> }

/** Waits until the receiver holds `n` webhooks of `event`, or the deadline passes. */
async function arrived(r: Rig, event: string, n: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const { byEvent } = await ask<{ byEvent: Record<string, number> }>(r.receiver, { type: 'count' });
    if ((byEvent[event] ?? 0) >= n) return;
    await sleep(100);
  }
}

/** One scenario: every monitor fails on its next check, due over `spreadMs`; then they recover. */
async function scenario(r: Rig, name: string, spreadMs: number): Promise<PhaseRow> {
  await park(r.c, r.org);
  await ask(r.target, { type: 'fail', on: true });
  const since = Date.now();
  const start = since + 1000;
  const cpu = () => cpuNow(r.vigil.ready.pid, [r.target.ready.pid, r.receiver.ready.pid], r.dbName);
  const c0 = cpu();
  const sqlTiming = process.env.BENCH_SQL_TIMING === '1';
  if (sqlTiming) await ask(r.vigil, { type: 'sql' });
  await scheduleFrom(r.c, r.ids, start, spreadMs);
  await arrived(r, 'incident.opened', N, start + spreadMs + TIMEOUT);
  const c1 = cpu();
  if (sqlTiming) {
    const { top } = await ask<{ top: SqlTime[] }>(r.vigil, { type: 'sql' });
    console.error(`${name}: Vigil's SQL wall time (summed over connections), by statement:`);
    for (const q of top) console.error(`  ${(q.ms / 1000).toFixed(2).padStart(7)} s ${String(q.n).padStart(6)}× ${(q.ms / q.n).toFixed(2).padStart(7)} ms  ${q.text}`);
  }
  const { arrivals, bad } = await ask<{ arrivals: Arrival[]; bad: number }>(r.receiver, { type: 'collect' });
  const incidents = await incidentsSince(r.c, r.org, since);

  const first = new Map<string, Arrival>();
  let duplicates = 0;
  for (const a of arrivals.filter((x) => x.event === 'incident.opened').sort((x, y) => x.at - y.at)) {
    if (first.has(a.incidentId)) duplicates++;
    else first.set(a.incidentId, a);
  }
  const missing = incidents.filter((i) => !first.has(i.incidentId));
  const latencies = incidents.filter((i) => first.has(i.incidentId)).map((i) => { const a = first.get(i.incidentId)!; return a.at - Date.parse(a.startedAt); });
  const stages = stagesOf(incidents, latencies);
  const cpuText = cpuLine(c0, c1);
  const row: PhaseRow = { name: `${name}: ${N} due over ${spreadMs / 1000} s`, spreadS: spreadMs / 1000, expected: N, incidents: incidents.length, latency: summary(latencies),
    missing: missing.length, duplicates, stages, cpu: cpuText };
  const l = row.latency;
  console.log(`${name}: ${incidents.length} incidents opened (expected ${N}); webhooks: count ${l.count}, p50 ${l.p50} ms, p90 ${l.p90} ms, ` +
    `p99 ${l.p99} ms, max ${l.max} ms; never arrived: ${missing.length}${duplicates ? `; duplicates: ${duplicates}` : ''}${bad ? `; unreadable bodies: ${bad}` : ''}\n` +
    `  ${flow(incidents)}\n  ${cpuText}`);
  for (const m of missing.slice(0, 20)) console.log(`  NEVER ARRIVED: incident ${m.incidentId} (started ${new Date(m.started).toISOString()})`);

  // Recovery (not measured): the target answers 200 again, every monitor comes back up and its resolution is delivered.
  await park(r.c, r.org);
  await ask(r.target, { type: 'fail', on: false });
  await scheduleFrom(r.c, r.ids, Date.now(), 5000);
  await waitFor(r.c, `select count(*)::int as n from monitors where organization_id = $1 and status = 'up'`, [r.org], (n) => n === r.ids.length, 60_000);
  await arrived(r, 'incident.resolved', incidents.length, Date.now() + TIMEOUT);
  await ask(r.receiver, { type: 'collect' });
  return row;
}

async function main(): Promise<void> {
  const names = (process.env.BENCH_SCENARIOS || 'steady,burst').split(',').map((s) => s.trim()).filter(Boolean);
  for (const s of names) if (!(s in SCENARIOS)) throw new Error(`unknown scenario ${s} (steady, burst)`);
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:alerts needs PostgreSQL: set BENCH_DATABASE_URL or run one on 127.0.0.1:5432');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-alerts-'));
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
  const c = new pg.Client({ connectionString: db.url });
  let target: Child<TargetReady> | undefined;
  let receiver: Child<ReceiverReady> | undefined;
  let vigil: Child<VigilReady> | undefined;
  try {
    target = await startChild<TargetReady>('alerts-target.ts', process.env);
    receiver = await startChild<ReceiverReady>('alerts-receiver.ts', process.env);
    let t = Date.now();
    const { organizationId: org } = await seedMonitors(db.url, MASTER_KEY, N, INTERVAL, target.ready.url);
    await c.connect();
    const ids = await seedChannels(c, MASTER_KEY, org, `${receiver.ready.url}/hook`, CHANNELS);
    console.error(`seeded ${N} monitors and ${CHANNELS} webhook channels in ${((Date.now() - t) / 1000).toFixed(1)} s (${db.label})`);
    vigil = await startChild<VigilReady>('alerts-vigil.ts', {
      ...process.env, DATABASE_URL: db.url, MASTER_KEY: MASTER_KEY.toString('base64'), DATA_DIR: dataDir,
    }, undefined, prof);
    t = Date.now();
    await scheduleFrom(c, ids, Date.now(), 5000); // every monitor checked up once
    await waitFor(c, `select count(*)::int as n from monitors where organization_id = $1 and status = 'up'`, [org], (n) => n === N, 60_000);
    console.error(`all ${N} monitors up after ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const rig: Rig = { c, org, ids, dbName: new URL(db.url).pathname.slice(1), target, receiver, vigil };
    const rows: PhaseRow[] = [];
    for (const s of names) rows.push(await scenario(rig, s, SCENARIOS[s]));

    const cpus = os.cpus();
    console.log(`\nConfirming check started → incident.opened webhook arrived (includes the check itself, the ≤ 100 ms result batching, ` +
      `the result transaction, the queue pickup and the POST):\n\n${latencyTable(rows)}\n`);
    console.log(`Where the time went (p50 / p99 in ms; columns without (ms) count from the confirming check's start):\n\n${stagesTable(rows)}\n`);
    console.log(`Node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, ` +
      `${Math.round(os.totalmem() / 2 ** 30)} GiB RAM; database: ${db.label}; ${N} http monitors (confirmations 1, interval ${INTERVAL} s), ` +
      `${CHANNELS} shared webhook channels; Vigil, target and receiver in separate processes on this machine.`);
    for (const r of rows) console.log(`${r.name}: ${r.cpu}`);
    for (const r of rows) console.log(`Target p99 < 2 s, none lost (${r.name}): ${meets(r) ? 'met' : 'MISSED'}`);
  } finally {
    await c.end().catch(() => undefined);
    await vigil?.stop();
    await receiver?.stop();
    await target?.stop();
    await db.drop().catch((e) => console.error(`dropping the bench database: ${(e as Error).message}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
