/**
 * Web analytics benchmark — `npm run bench:analytics`.
 *
 * Vigil (child, bench/analytics-vigil.ts, as `npm start` runs it: the API,
 * `POST /api/event` and the worker whose drain counts the buffer, in one
 * process; TRUST_PROXY=loopback so X-Forwarded-For names the visitor; the log
 * at npm start's level, info) on a fresh database, an organisation on the
 * enterprise plan.
 *
 * (a) Ingestion, by default in the deployment for volume: that server with
 *     WORKER=false and `npm run worker` beside it (src/worker-main.ts: its
 *     drain counts the buffer, in larger batches); BENCH_WORKER_PROCESS=0
 *     for npm start's one process. A site is created through the API;
 *     autocannon (BENCH_CONNECTIONS connections, pipelining 1) posts the Plausible
 *     tracker's requests (bench/analytics-events.ts: text/plain JSON,
 *     pageviews and custom events with props over 300 Zipf-distributed
 *     paths, UTM queries, referrers; ~250 browser user agents; 20,000
 *     visitors each with its own public address in X-Forwarded-For) for
 *     BENCH_DURATION seconds after a warm-up. Prints accepted events/s,
 *     p50/p99, non-2xx and dropped answers, Vigil's CPU per 1,000 events (the
 *     drain included, as it runs in the same process) and RSS, PostgreSQL's
 *     and the client's CPU, the load of the machine; then waits until the
 *     drain has emptied the buffer, prints the drain's rate during and after
 *     the load, and checks that none was lost: the events the drain counted
 *     (`ingest_drained`), the raw events stored and the site's totals
 *     (pageviews + events over every day) all equal the 202 answers (a
 *     request cut off by the end of a run may have been stored unanswered:
 *     at most one per connection and run more). Target (2 cores): ≥ 10,000
 *     events/s, none lost.
 *
 * (b) A year. A second site gets BENCH_EVENTS (10,000,000) events over the
 *     365 days ending today (bench/analytics-year.ts: weekly and daily
 *     rhythm, visits of 1–n events, 2,000 Zipf paths, 50 referrers, 100
 *     countries, browser/OS/device mixes, UTM, custom events with props,
 *     visitors hashed per day). The latest days, up to BENCH_DRAIN_EVENTS
 *     (1,000,000) events, are written into `analytics_buffer` in one
 *     statement and counted by the real drain (timed: its events/s, CPU and
 *     SQL time by statement). The drain does ~9,000 events/s on this machine,
 *     so 10 million would take ~20 minutes: the older days' roll-ups are
 *     written instead by `rollupSql`, the drain's counting said in SQL (daily
 *     rows only: reports read nothing else; their raw events, sessions and
 *     hourly rows are not written), on BENCH_SQL_CONNECTIONS (2) connections
 *     at once. That SQL is checked against the drain first: run over the
 *     drained days' raw events, its daily rows must equal the drain's row for
 *     row. Set BENCH_DRAIN_EVENTS=BENCH_EVENTS to drain everything.
 *     Then, after `VACUUM ANALYZE` (what autovacuum would have done over a
 *     year), `GET /api/v1/analytics/{id}?days=365&dimensions=<all ten>`:
 *     sequentially and with BENCH_REPORT_CLIENTS (4) clients, p50/p99; the
 *     statements one report runs and their times; EXPLAIN ANALYZE of each as
 *     sent. (The older days' monthly roll-ups are summed from their daily
 *     rows, as the drain adds them.) Target: p99 < 200 ms.
 *
 * Environment:
 *   BENCH_PARTS        a,b (default both)
 *   BENCH_DURATION     seconds of measured load in (a) (15); BENCH_WARMUP seconds before it (3)
 *   BENCH_CONNECTIONS  autocannon connections in (a) (128); BENCH_VISITORS visitors in (a) (20,000)
 *   BENCH_WORKER_PROCESS=0  (a) with the drain in the server process, as npm start alone runs it
 *   BENCH_CLIENT=setup  (a) with autocannon building each request from setupRequest (the default, prebuilt,
 *                      hands it the requests' bytes made before the load: the same requests, less client CPU)
 *   BENCH_RING         requests built before the load in (a), sent in turn (100,000)
 *   BENCH_CPU_PROF     a folder: a V8 CPU profile of Vigil over the measured load of (a) is written into it and summarised
 *   BENCH_EVENTS       events of the year in (b) (10,000,000); BENCH_DRAIN_EVENTS of them through the drain (1,000,000)
 *   BENCH_SQL_CONNECTIONS  connections writing the other days' roll-ups (2)
 *   BENCH_CHECK=0      skip checking the roll-up SQL against the drain
 *   BENCH_REPORTS      reports per measurement in (b) (60); BENCH_REPORT_CLIENTS concurrent clients (4)
 *   BENCH_DATABASE_URL database to use (left as is); otherwise a fresh vigil_bench_<pid> on
 *                      postgres://postgres@127.0.0.1:5432, dropped at the end
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { DIMENSIONS } from '../src/analytics/report';
import { api, ask, benchDatabase, memKb, startChild, type Child } from './lib';
import { machineBusy, postgresDelta, postgresSnapshot, processCpu } from './checks-cpu';
import { Traffic } from './analytics-events';
import { profileLines } from './analytics-profile';
import type { AnalyticsVigilReady, Captured } from './analytics-vigil';
import { dayPlan, fillEvents, rollupSql } from './analytics-year';
import type { SqlTime } from './sqlTiming';

const PARTS = (process.env.BENCH_PARTS || 'a,b').split(',').map((s) => s.trim());
const DURATION = Number(process.env.BENCH_DURATION || 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 128);
const VISITORS = Number(process.env.BENCH_VISITORS || 20_000);
const EVENTS = Number(process.env.BENCH_EVENTS || 10_000_000);
const DRAIN_EVENTS = Math.min(EVENTS, Number(process.env.BENCH_DRAIN_EVENTS || 1_000_000));
const SQL_CONNECTIONS = Number(process.env.BENCH_SQL_CONNECTIONS || 2);
const CHECK = process.env.BENCH_CHECK !== '0';
const REPORTS = Number(process.env.BENCH_REPORTS || 60);
const REPORT_CLIENTS = Number(process.env.BENCH_REPORT_CLIENTS || 4);
const TARGET_RATE = 10_000;
const TARGET_REPORT_P99 = 200;
const MASTER_KEY = randomBytes(32).toString('base64');
const EVENT_PATH = '/api/event';
const RING = Number(process.env.BENCH_RING || 100_000);
const SEPARATE_WORKER = process.env.BENCH_WORKER_PROCESS !== '0';
const PROF = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const n0 = (n: number) => Math.round(n).toLocaleString('en-US');
const n1 = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const load1 = () => os.loadavg()[0].toFixed(1);
const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

/** CPU seconds so far: Vigil, this database's PostgreSQL, this process, the machine. */
function cpuNow(pid: number | number[], db: string) {
  const me = process.cpuUsage();
  const vigil = (Array.isArray(pid) ? pid : [pid]).reduce((a, p) => a + processCpu(p), 0);
  return { t: performance.now(), vigil, pg: postgresSnapshot(db), me: (me.user + me.system) / 1e6, busy: machineBusy() };
}
type Cpu = ReturnType<typeof cpuNow>;
function cpuDelta(a: Cpu, b: Cpu) {
  const pgs = postgresDelta(a.pg, b.pg).own;
  const busy = b.busy - a.busy;
  const s = (b.t - a.t) / 1000;
  return { s, vigil: b.vigil - a.vigil, pg: pgs, me: b.me - a.me, busy, other: busy - (b.vigil - a.vigil) - pgs - (b.me - a.me), cores: os.cpus().length };
}
const busyLine = (d: ReturnType<typeof cpuDelta>) =>
  `machine busy ${Math.round((100 * d.busy) / (d.s * d.cores))}% of ${d.cores} cores, ${n1(d.other)} CPU s of it other processes' (other engineers' work)`;

const drained = async (c: pg.Client) => Number((await c.query(`select coalesce((select items from ingest_drained where buffer = 'analytics_buffer'), 0)::bigint as n`)).rows[0].n);
const bufferEmpty = async (c: pg.Client) => !(await c.query('select exists (select 1 from analytics_buffer) as x')).rows[0].x;

/** The statements of analytics (and transactions); the all-in-one process's other workers' polls are left out. */
function sqlLines(top: SqlTime[], limit = 12): string[] {
  return top.filter((q) => /analytics|ingest_drained|advisory|^(begin|commit)/i.test(q.text)).slice(0, limit).map((q) => `  ${(q.ms / 1000).toFixed(2).padStart(7)} s ${String(q.n).padStart(7)}× ${(q.ms / q.n).toFixed(2).padStart(8)} ms  ${q.text}`);
}

// ---------------------------------------------------------------------------------------------------------------
// (a) ingestion

interface Load { result: autocannon.Result; accepted: number; dropped: number; pageviews: number; custom: number }
/** A request built in advance: the client's work per request is then autocannon's own. */
interface Prepared { body: string; headers: Record<string, string>; pageview: boolean }

/** `n` tracker requests of `traffic`, built before the load (sent in turn, again from the start when all were). */
function prepare(traffic: Traffic, n: number): Prepared[] {
  const origin = `https://${traffic.domain}`;
  return Array.from({ length: n }, () => {
    const t = traffic.next();
    return {
      body: t.body, pageview: t.pageview,
      headers: {
        'content-type': 'text/plain', 'user-agent': t.ua, 'x-forwarded-for': t.ip, origin, referer: t.page, accept: '*/*',
        'accept-language': 'en-US,en;q=0.9', 'accept-encoding': 'gzip, deflate, br, zstd', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'empty',
      },
    };
  });
}

let cursor = 0;

/**
 * BENCH_CLIENT=prebuilt (the default): each prepared request is made into its HTTP/1.1
 * bytes once, before the load, and autocannon's request iterator hands them
 * out in turn instead of rebuilding a request per send from `setupRequest`
 * (two object merges, the header text, two buffers): the same requests, less
 * of the shared 2 cores spent by the client. It patches an internal of
 * autocannon 9 (lib/requestIterator.js), for this process only.
 */
const PREBUILT = (process.env.BENCH_CLIENT || 'prebuilt') === 'prebuilt';
let prebuilt: Buffer[] | null = null;

function prebuild(base: string, ring: Prepared[]): Buffer[] {
  const host = new URL(base).host;
  return ring.map((p) => {
    const body = Buffer.from(p.body);
    const head = [`POST ${EVENT_PATH} HTTP/1.1`, `Host: ${host}`, 'Connection: keep-alive', ...Object.entries(p.headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${body.length}`, '', ''].join('\r\n');
    return Buffer.concat([Buffer.from(head), body]);
  });
}

interface Iterator { currentRequest: { requestBuffer?: Buffer }; context: { pageview?: boolean } }
const RequestIterator = require('autocannon/lib/requestIterator') as { prototype: { nextRequest(this: Iterator): unknown } };
const ownNextRequest = RequestIterator.prototype.nextRequest;

/** autocannon posting the next prepared request on every connection. */
async function load(base: string, ring: Prepared[], seconds: number): Promise<Load> {
  const out = { accepted: 0, dropped: 0, pageviews: 0, custom: 0 };
  if (PREBUILT) {
    const bytes = prebuilt ?? (prebuilt = prebuild(base, ring));
    RequestIterator.prototype.nextRequest = function (this: Iterator) {
      const i = cursor++ % ring.length;
      this.context.pageview = ring[i].pageview;
      this.currentRequest.requestBuffer = bytes[i];
      return this.currentRequest;
    };
  } else {
    RequestIterator.prototype.nextRequest = ownNextRequest;
  }
  const requests = [{
    method: 'POST' as const,
    setupRequest: (req: autocannon.Request, context: { pageview?: boolean }) => {
      const p = ring[cursor++ % ring.length];
      context.pageview = p.pageview;
      return { ...req, method: 'POST', path: EVENT_PATH, body: p.body, headers: p.headers };
    },
    onResponse: (status: number, _body: string, context: { pageview?: boolean }, headers?: Record<string, unknown>) => {
      if (status !== 202) return;
      if (headers && 'x-plausible-dropped' in headers) out.dropped++;
      else {
        out.accepted++;
        if (context.pageview) out.pageviews++;
        else out.custom++;
      }
    },
  }];
  const result = await autocannon({ url: base, connections: CONNECTIONS, pipelining: 1, duration: seconds, requests: requests as unknown as autocannon.Request[] });
  return { result, ...out };
}

/** `npm run worker` (src/worker-main.ts through tsx) on the bench database: the drain then runs beside the server, not in it. */
async function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../src/worker-main.ts')], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'ignore', 'inherit'] });
  // Its drain polls the buffer; give it its migrations' check and first poll.
  await sleep(3000);
  if (proc.exitCode !== null) throw new Error(`the worker process exited with code ${proc.exitCode}`);
  return proc;
}
const stopProcess = (p: ChildProcess | null) => new Promise<void>((resolve) => {
  if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
  p.once('exit', () => resolve());
  p.kill('SIGTERM');
});

async function partA(env: NodeJS.ProcessEnv, dbName: string, c: pg.Client): Promise<{ ok: boolean; summary: string }> {
  const vigil = await startChild<AnalyticsVigilReady>('analytics-vigil.ts', { ...env, WORKER: SEPARATE_WORKER ? 'false' : 'true', TRUST_PROXY: 'loopback' });
  let worker: ChildProcess | null = null;
  try {
    if (SEPARATE_WORKER) worker = await startWorkerProcess(env);
    const pids = [vigil.ready.pid, ...(worker?.pid ? [worker.pid] : [])];
    const v = vigil.ready;
    const domain = 'shop.example.com';
    const site = await api<{ id: string }>(v, 'POST', '/analytics', { domain, workspaceId: v.workspaceId });
    const traffic = new Traffic(domain, VISITORS);
    const ring = prepare(traffic, RING);
    log(`(a) site ${site.id}; ${traffic.uas.length} user agents, ${traffic.paths.length} paths, ${n0(VISITORS)} visitors; load average ${load1()}`);
    const before = await drained(c);
    const warm = WARMUP > 0 ? await load(v.url, ring, WARMUP) : null;
    const d0 = await drained(c);
    await ask(vigil, { type: 'sql' });
    if (PROF) vigil.proc.send({ type: 'profile', dir: PROF });
    const c0 = cpuNow(pids, dbName);
    const loadAvg = load1();
    const m = await load(v.url, ring, DURATION);
    const c1 = cpuNow(pids, dbName);
    const profile = PROF ? (await ask<{ file: string | null }>(vigil, { type: 'profile', stop: true })).file : null;
    const d1 = await drained(c);
    const rss = memKb(v.pid, 'VmRSS');
    const hwm = memKb(v.pid, 'VmHWM');
    const topLoad = (await ask<{ top: SqlTime[] }>(vigil, { type: 'sql' })).top;
    const backlog = Number((await c.query('select count(*)::int as n from analytics_buffer')).rows[0].n);

    // The drain empties the buffer.
    const t0 = performance.now();
    while (!(await bufferEmpty(c)) && performance.now() - t0 < 300_000) await sleep(50);
    const c2 = cpuNow(pids, dbName);
    const drainMs = performance.now() - t0;
    const d2 = await drained(c);
    const topDrain = (await ask<{ top: SqlTime[] }>(vigil, { type: 'sql' })).top;

    // None lost.
    const acked = (warm?.accepted ?? 0) + m.accepted;
    const processed = d2 - before;
    const { rows: [stored] } = await c.query('select count(*)::bigint as n from analytics_events where site_id = $1', [site.id]);
    const { rows: [tot] } = await c.query(`select coalesce(sum(pageviews), 0)::bigint as pv, coalesce(sum(events), 0)::bigint as ev, coalesce(sum(visitors), 0)::bigint as visitors,
        coalesce(sum(visits), 0)::bigint as visits, coalesce(sum(bounces), 0)::bigint as bounces
      from analytics_daily where site_id = $1 and dimension = '' and value = ''`, [site.id]);
    const { rows: spread } = await c.query(`select dimension, count(distinct value)::int as n from analytics_daily where site_id = $1 and dimension <> '' group by dimension order by dimension`, [site.id]);
    const counted = Number(tot.pv) + Number(tot.ev);
    const slack = (warm ? 2 : 1) * CONNECTIONS;
    const within = (x: number) => x >= acked && x - acked <= slack;
    const none = within(processed) && within(Number(stored.n)) && within(counted) && processed === Number(stored.n) && processed === counted;

    const r = m.result;
    const rate = m.accepted / r.duration;
    const cpu = cpuDelta(c0, c1);
    const cpuD = cpuDelta(c1, c2);
    const bad = r.non2xx + r.errors + r.timeouts;
    const per1k = (s: number, n: number) => n0((1e6 * s) / Math.max(1, n));
    const out: string[] = [];
    out.push(`\n(a) Ingestion: POST ${EVENT_PATH}, ${DURATION} s after a ${WARMUP} s warm-up, ${CONNECTIONS} connections (autocannon ${PREBUILT ? 'sending requests made before the load' : 'building each request in setupRequest'}); the tracker's text/plain JSON ` +
      `(${Math.round((100 * m.pageviews) / Math.max(1, m.accepted))}% pageviews, the rest custom events with props), ${traffic.uas.length} browser user agents, ` +
      `${n0(VISITORS)} visitors by X-Forwarded-For (TRUST_PROXY=loopback), ${traffic.paths.length} Zipf paths; ${SEPARATE_WORKER ? 'drain in a worker process beside the server (WORKER=false and npm run worker)' : 'drain in the server process (as npm start)'}`);
    out.push(`Accepted: ${n0(m.accepted)} events in ${r.duration.toFixed(1)} s = ${n0(rate)} events/s (per second min ${n0(r.requests.min)}, max ${n0(r.requests.max)})`);
    out.push(`Latency: p50 ${r.latency.p50} ms, p90 ${r.latency.p90} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms`);
    out.push(`Non-2xx: ${r.non2xx}, errors: ${r.errors}, timeouts: ${r.timeouts}; dropped (x-plausible-dropped): ${m.dropped}${warm ? ` (warm-up: ${warm.result.non2xx + warm.result.errors + warm.result.timeouts} bad, ${warm.dropped} dropped)` : ''}`);
    out.push(`Vigil CPU: ${n1(cpu.vigil)} s over ${cpu.s.toFixed(1)} s = ${per1k(cpu.vigil, m.accepted)} ms per 1,000 events (${Math.round((100 * cpu.vigil) / cpu.s)}% of a core, ` +
      `${SEPARATE_WORKER ? 'the server and the worker process together' : 'ingestion and the drain running alongside'}); server RSS ${n0(rss / 1024)} MB (peak ${n0(hwm / 1024)} MB)`);
    out.push(`Elsewhere during the load: PostgreSQL ${n1(cpu.pg)} s (${per1k(cpu.pg, m.accepted)} ms per 1,000 events), autocannon (this process) ${n1(cpu.me)} s; ` +
      `${busyLine(cpu)}; load average ${loadAvg} before`);
    // What the CPU figures bound: every core busy with nothing but this work (never quite so), and with the client elsewhere.
    const own = (cpu.vigil + cpu.pg) / Math.max(1, m.accepted);
    out.push(`CPU bound: Vigil and PostgreSQL ${n0(own * 1e6)} µs per event, the client ${n0((cpu.me / Math.max(1, m.accepted)) * 1e6)} µs: ` +
      `${cpu.cores} cores kept wholly busy would carry at most ${n0(cpu.cores / (own + cpu.me / Math.max(1, m.accepted)))} events/s here, ` +
      `${n0(cpu.cores / own)} events/s with the client on another machine (an extrapolation, not a measurement; the server's one event loop is a bound of its own)`);
    const during = d1 - d0;
    out.push(`Drain: ${n0(during)} events counted during the load (${n0(during / r.duration)}/s, ${Math.round((100 * during) / Math.max(1, m.accepted))}% of those accepted); ` +
      `${n0(backlog)} buffered when it ended, empty ${secs(drainMs)} later = ${n0(backlog / (drainMs / 1000))} events/s draining alone ` +
      `(Vigil ${per1k(cpuD.vigil, d2 - d1)} ms + PostgreSQL ${per1k(cpuD.pg, d2 - d1)} ms CPU per 1,000 events)`);
    out.push(`Verification: ${n0(acked)} events answered 202 (warm-up included); counted by the drain ${n0(processed)}, raw events stored ${n0(Number(stored.n))}, ` +
      `the site's totals ${n0(Number(tot.pv))} pageviews + ${n0(Number(tot.ev))} events = ${n0(counted)} — ` +
      `${none ? (processed === acked ? 'equal: none lost' : `none lost (${processed - acked} sent as a run ended, stored but not answered)`) : 'MISMATCH: LOST or double counted'}`);
    out.push(`  counted as ${n0(Number(tot.visitors))} daily unique visitors, ${n0(Number(tot.visits))} visits (bounce rate ${Math.round((100 * Number(tot.bounces)) / Math.max(1, Number(tot.visits)))}%); ` +
      `distinct values: ${spread.map((s) => `${s.dimension} ${s.n}`).join(', ')}`);
    if (profile) out.push(...profileLines(profile, m.accepted), `  (profile: ${profile})`);
    out.push(`Vigil's SQL wall time during the load (summed over connections), by statement (analytics and transactions; the other workers' polls left out):`, ...sqlLines(topLoad, 8));
    out.push(`... and while draining the backlog alone:`, ...sqlLines(topDrain, 8));
    const ok = rate >= TARGET_RATE && none && bad === 0 && m.dropped === 0;
    out.push(`Targets: ≥ ${n0(TARGET_RATE)} events/s: ${rate >= TARGET_RATE ? 'met' : 'MISSED'} (${n0(rate)}, p99 ${r.latency.p99} ms); none lost: ${none ? 'met' : 'MISSED'}; non-2xx: ${bad}; dropped: ${m.dropped}`);
    console.log(out.join('\n'));
    return { ok: none && bad === 0 && m.dropped === 0, summary: `(a) ${n0(rate)} events/s (target ${n0(TARGET_RATE)}: ${rate >= TARGET_RATE ? 'met' : 'missed'}), p99 ${r.latency.p99} ms, none lost: ${none ? 'yes' : 'NO'}` };
  } finally {
    await vigil.stop();
    await stopProcess(worker);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// (b) a year, and the report

/** CPU seconds of a PostgreSQL backend. */
async function backendCpu(c: pg.Client): Promise<() => number> {
  const pid = Number((await c.query('select pg_backend_pid() as p')).rows[0].p);
  return () => processCpu(pid);
}

/** The drain's daily rows of the drained days (`from`–`to`) against those `rollupSql` makes of the same raw events: rows that differ, with examples. */
async function checkRollupSql(url: string, siteId: string, from: string, to: string): Promise<{ rows: number; differ: number; onlyDrain: number; onlySql: number; examples: string[]; ms: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const t = performance.now();
    await c.query(`set time zone 'UTC'`);
    await c.query(`set work_mem = '128MB'`);
    await c.query('set jit = off');
    await c.query('create temp table cmp_d (like analytics_daily including all)');
    const source = `select *, row_number() over (order by at, session) as ord from analytics_events where site_id = ${pg.escapeLiteral(siteId)}`;
    for (const s of rollupSql(source, 'cmp_d')) await c.query(s, s.includes('$1') ? [siteId] : []);
    const metrics = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'];
    const { rows: [r] } = await c.query(`select count(*)::int as rows, count(*) filter (where a.value is null)::int as only_sql, count(*) filter (where b.value is null)::int as only_drain,
        count(*) filter (where a.value is not null and b.value is not null and (${metrics.map((m) => `a.${m}`).join(', ')}) is distinct from (${metrics.map((m) => `b.${m}`).join(', ')}))::int as differ
      from (select * from analytics_daily where site_id = $1 and day between $2 and $3) a full join cmp_d b on a.day = b.day and a.dimension = b.dimension and a.value = b.value`, [siteId, from, to]);
    const { rows: ex } = await c.query(`select coalesce(a.day, b.day)::text as day, coalesce(a.dimension, b.dimension) as dimension, coalesce(a.value, b.value) as value,
        row(${metrics.map((m) => `a.${m}`).join(', ')})::text as drain, row(${metrics.map((m) => `b.${m}`).join(', ')})::text as sql
      from (select * from analytics_daily where site_id = $1 and day between $2 and $3) a full join cmp_d b on a.day = b.day and a.dimension = b.dimension and a.value = b.value
      where row(${metrics.map((m) => `a.${m}`).join(', ')}) is distinct from row(${metrics.map((m) => `b.${m}`).join(', ')}) limit 5`, [siteId, from, to]);
    return { rows: r.rows, differ: r.differ, onlyDrain: r.only_drain, onlySql: r.only_sql, ms: performance.now() - t,
      examples: ex.map((e) => `${e.day} ${e.dimension || '(totals)'} ${JSON.stringify(e.value)}: drain ${e.drain}, SQL ${e.sql} (visitors, pageviews, events, visits, bounces, duration_s)`) };
  } finally {
    await c.end();
  }
}

/** Writes the roll-ups of `plan`'s days with `rollupSql`, days spread over `connections` connections; CPU seconds of the backends. */
async function writeRollups(url: string, siteId: string, domain: string, plan: { day: string; events: number }[], connections: number): Promise<{ cpu: number; events: number }> {
  // Chunks of ~300,000 events (a dozen days), handed out in turn.
  const chunks: { day: string; events: number }[][] = [];
  let cur: { day: string; events: number }[] = [];
  let n = 0;
  for (const d of plan) {
    cur.push(d);
    n += d.events;
    if (n >= 300_000) { chunks.push(cur); cur = []; n = 0; }
  }
  if (cur.length) chunks.push(cur);
  let next = 0;
  let done = 0;
  let cpu = 0;
  let events = 0;
  const worker = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const mine = await backendCpu(c);
      const start = mine();
      await c.query(`set time zone 'UTC'`);
      await c.query(`set work_mem = '128MB'`);
      await c.query('set jit = off');
      await c.query('create temp table bx_src (like analytics_buffer including identity)');
      for (let i = next++; i < chunks.length; i = next++) {
        await c.query('truncate bx_src');
        const n = await fillEvents(c, 'bx_src', siteId, domain, chunks[i], false);
        events += n;
        for (const s of rollupSql('select *, seq as ord from bx_src')) await c.query(s, s.includes('$1') ? [siteId] : []);
        done++;
        if (done % 4 === 0 || done === chunks.length) log(`(b) roll-ups in SQL: ${done}/${chunks.length} chunks (${n0(events)} events); load average ${load1()}`);
      }
      cpu += mine() - start;
    } finally {
      await c.end();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, connections) }, worker));
  return { cpu, events };
}

/** A report statement's label: its text, shortened, and the dimension it was for. */
function label(q: Captured): string {
  const text = q.text.replace(/\s+/g, ' ').trim();
  const dim = q.values.find((x) => typeof x === 'string' && ((DIMENSIONS as readonly string[]).includes(x) || x === 'prop'));
  const kind = /from analytics_daily/.test(text)
    ? (/row_number\(\) over/.test(text) ? 'event props' : /group by value/.test(text) ? `breakdown ${dim}` : /dimension = ''/.test(text) ? 'daily totals (series)' : 'analytics_daily')
    : /analytics_sites/.test(text) ? 'the site (+ views of 24 h from analytics_hourly)' : /"api_keys"/.test(text) ? 'the API key (lookup cached 2 s; last use recorded)' : `(background) ${text.slice(0, 60)}`;
  return kind;
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};


async function partB(env: NodeJS.ProcessEnv, dbName: string, url: string, c: pg.Client): Promise<{ ok: boolean; summary: string }> {
  const vigil = await startChild<AnalyticsVigilReady>('analytics-vigil.ts', { ...env, WORKER: 'true' });
  const out: string[] = [];
  const print = (s: string) => { out.push(s); console.log(s); };
  try {
    const v = vigil.ready;
    const startedAt = performance.now();
    const domain = 'year.example.com';
    const site = await api<{ id: string }>(v, 'POST', '/analytics', { domain, workspaceId: v.workspaceId });
    const plan = dayPlan(EVENTS, 365, new Date());
    // The latest days through the drain (up to DRAIN_EVENTS events, one day at least), the older ones in SQL.
    let k = plan.length;
    for (let sum = 0; k > 0 && (sum + plan[k - 1].events <= DRAIN_EVENTS || k === plan.length); k--) sum += plan[k - 1].events;
    if (DRAIN_EVENTS >= EVENTS) k = 0;
    const viaDrain = plan.slice(k);
    const viaSql = plan.slice(0, k);
    const nDrain = viaDrain.reduce((a, d) => a + d.events, 0);
    print(`\n(b) A year of one site: ${n0(EVENTS)} events over ${plan[0].day} – ${plan.at(-1)!.day} (${n0(Math.min(...plan.map((p) => p.events)))}–${n0(Math.max(...plan.map((p) => p.events)))} a day); ` +
      `${n0(nDrain)} of the latest ${viaDrain.length} days through the real drain, ${n0(EVENTS - nDrain)} of ${viaSql.length} older days' roll-ups written in SQL`);

    // The drain.
    await c.query(`set time zone 'UTC'`);
    await c.query(`set work_mem = '128MB'`);
    await c.query('set jit = off');
    log(`(b) writing ${n0(nDrain)} events into analytics_buffer; load average ${load1()}`);
    let t = performance.now();
    const before = await drained(c);
    await ask(vigil, { type: 'sql' });
    const filled = await fillEvents(c, 'analytics_buffer', site.id, domain, viaDrain, true);
    const fillMs = performance.now() - t;
    log(`(b) buffer filled in ${secs(fillMs)}; draining (the drain's batches are 5,000 events); load average ${load1()}`);
    const loadAvg = load1();
    const c0 = cpuNow(v.pid, dbName);
    t = performance.now();
    let last = t;
    for (;;) {
      const n = (await drained(c)) - before;
      if (n >= filled) break;
      if (performance.now() - last > 15_000) { last = performance.now(); log(`(b) drained ${n0(n)}/${n0(filled)} (${n0(n / ((last - t) / 1000))}/s); load average ${load1()}`); }
      if (performance.now() - t > 3_600_000) throw new Error('the drain did not finish within an hour');
      await sleep(200);
    }
    const drainMs = performance.now() - t;
    const c1 = cpuNow(v.pid, dbName);
    const topDrain = (await ask<{ top: SqlTime[] }>(vigil, { type: 'sql' })).top;
    const cpu = cpuDelta(c0, c1);
    const per1k = (s: number) => n0((1e6 * s) / filled);
    const housekept = (performance.now() - startedAt) > 9.5 * 60_000;
    print(`Drain: ${n0(filled)} events written to the buffer in one statement (${secs(fillMs)}), counted in ${secs(drainMs)} = ${n0(filled / (drainMs / 1000))} events/s ` +
      `(${n0((filled / (drainMs / 1000)) * 60)} a minute: all ${n0(EVENTS)} would take ${n1(EVENTS / (filled / (drainMs / 1000)) / 60)} minutes)`);
    print(`  CPU: Vigil ${n1(cpu.vigil)} s (${per1k(cpu.vigil)} ms per 1,000 events), PostgreSQL ${n1(cpu.pg)} s (${per1k(cpu.pg)} ms per 1,000); ${busyLine(cpu)}; load average ${loadAvg} before` +
      (housekept ? '; NOTE: analytics housekeeping (every 10 min) ran during the drain: it deletes sessions and seen rows of days over 48 h old, so a few visits of the day being drained then may be split' : ''));
    print(`  the drain's SQL wall time by statement (summed over the batches; begin/commit include other workers' transactions):`);
    for (const l of sqlLines(topDrain, 10)) print(l);

    // The SQL equivalent, checked against the drain on the drained days, then run for the older days.
    if (viaSql.length && CHECK) {
      log(`(b) checking the roll-up SQL against the drain on ${viaDrain.length} days; load average ${load1()}`);
      const chk = await checkRollupSql(url, site.id, viaDrain[0].day, viaDrain.at(-1)!.day);
      const same = chk.differ === 0 && chk.onlyDrain === 0 && chk.onlySql === 0;
      print(`Roll-up SQL (bench/analytics-year.ts rollupSql) against the drain, over the ${n0(filled)} drained events: ${n0(chk.rows)} daily rows, ` +
        `${same ? 'identical' : `${chk.differ} differ, ${chk.onlyDrain} only from the drain, ${chk.onlySql} only from the SQL`} (${secs(chk.ms)})`);
      for (const e of chk.examples) print(`  ${e}`);
    }
    let sqlNote = '';
    if (viaSql.length) {
      log(`(b) writing the roll-ups of ${viaSql.length} older days in SQL on ${SQL_CONNECTIONS} connections; load average ${load1()}`);
      const la = load1();
      const b0 = machineBusy();
      t = performance.now();
      const w = await writeRollups(url, site.id, domain, viaSql, SQL_CONNECTIONS);
      const ms = performance.now() - t;
      const busy = machineBusy() - b0;
      sqlNote = `${n0(w.events)} events' daily roll-ups in SQL in ${secs(ms)} (${n0(w.events / (ms / 1000))} events/s; PostgreSQL ${n1(w.cpu)} CPU s = ` +
        `${n0((1e6 * w.cpu) / w.events)} ms per 1,000 events, generation included; machine busy ${Math.round((100 * busy) / (ms / 1000) / os.cpus().length)}%, load average ${la} before)`;
      print(`Older days: ${sqlNote}`);
      // Their monthly rows, as the drain would have added them (the month the drained days start in already has theirs).
      t = performance.now();
      const m = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'];
      await c.query(`insert into analytics_monthly as t (site_id, month, dimension, value, ${m.join(', ')})
        select site_id, date_trunc('month', day)::date, dimension, value, ${m.map((x) => `sum(${x})`).join(', ')}
        from analytics_daily where site_id = $1 and day between $2::date and $3::date group by 1, 2, 3, 4
        on conflict (site_id, dimension, month, value) do update set ${m.map((x) => `${x} = t.${x} + excluded.${x}`).join(', ')}`,
      [site.id, viaSql[0].day, viaSql.at(-1)!.day]);
      print(`  their monthly roll-ups summed from those daily rows in ${secs(performance.now() - t)}`);
    }
    const total = Number((await c.query(`select coalesce(sum(pageviews + events), 0)::bigint as n from analytics_daily where site_id = $1 and dimension = '' and value = ''`, [site.id])).rows[0].n);
    t = performance.now();
    await c.query('vacuum analyze analytics_daily, analytics_hourly, analytics_monthly');
    const { rows: [size] } = await c.query(`select (select count(*) from analytics_daily where site_id = $1)::bigint as daily,
        (select count(*) from analytics_hourly where site_id = $1)::bigint as hourly,
        (select count(*) from analytics_monthly where site_id = $1)::bigint as monthly,
        pg_total_relation_size('analytics_daily') as daily_bytes, pg_total_relation_size('analytics_hourly') as hourly_bytes`, [site.id]);
    const { rows: perDim } = await c.query(`select dimension, count(*)::int as rows, count(distinct value)::int as values from analytics_daily where site_id = $1 group by dimension order by rows desc`, [site.id]);
    print(`Roll-ups: ${n0(Number(size.monthly))} monthly rows, ${n0(Number(size.daily))} daily rows (${n0(Number(size.daily_bytes) / 2 ** 20)} MB with indexes), ${n0(Number(size.hourly))} hourly rows (drained days only; ` +
      `${n0(Number(size.hourly_bytes) / 2 ** 20)} MB); totals pageviews + events = ${n0(total)} (${total === EVENTS ? 'all' : `EXPECTED ${n0(EVENTS)}`}); VACUUM ANALYZE ${secs(performance.now() - t)}`);
    print(`  daily rows by dimension (rows / distinct values): ${perDim.map((d) => `${d.dimension || 'totals'} ${n0(d.rows)}/${n0(d.values)}`).join(', ')}`);

    // The report.
    const q = `/analytics/${site.id}?days=365&dimensions=${DIMENSIONS.join(',')}`;
    const full = `${v.url}/api/v1${q}`;
    const headers = { authorization: `Bearer ${v.apiKey}` };
    const get = async () => {
      const t0 = performance.now();
      const res = await fetch(full, { headers });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`GET ${q}: ${res.status} ${body.slice(0, 300)}`);
      return { ms: performance.now() - t0, body };
    };
    const first = JSON.parse((await get()).body).data as { pageviews: number; events: number; visitors: number; visits: number; bounceRate: number; breakdowns: { dimension: string; rows: unknown[] }[] };
    for (let i = 0; i < 2; i++) await get();
    const bytes = (await get()).body.length;
    print(`Report GET /api/v1${q}: ${n0(bytes / 1024)} KB of JSON; ${n0(first.pageviews)} pageviews + ${n0(first.events)} events` +
      `${first.pageviews + first.events === EVENTS ? ' (the whole year)' : ` (EXPECTED ${n0(EVENTS)}: the UTC day changed during the run?)`}, ${n0(first.visitors)} visitors, ` +
      `${n0(first.visits)} visits, bounce rate ${Math.round(first.bounceRate)}%; ${first.breakdowns.map((b) => `${b.dimension} ${b.rows.length}`).join(', ')} rows`);

    // The statements of one report.
    await ask(vigil, { type: 'capture', on: true });
    const captureRuns = 5;
    for (let i = 0; i < captureRuns; i++) await get();
    const captured = (await ask<{ list: Captured[] }>(vigil, { type: 'capture', on: false })).list;
    const byLabel = new Map<string, Captured[]>();
    for (const s of captured) {
      const l = label(s);
      byLabel.set(l, [...(byLabel.get(l) ?? []), s]);
    }

    // Sequential, then concurrent.
    const la = load1();
    const s0 = cpuNow(v.pid, dbName);
    const seq = await autocannon({ url: full, headers, connections: 1, amount: REPORTS });
    const s1 = cpuNow(v.pid, dbName);
    const con = await autocannon({ url: full, headers, connections: REPORT_CLIENTS, amount: REPORTS * 2 });
    const s2 = cpuNow(v.pid, dbName);
    const cs = cpuDelta(s0, s1);
    const cc = cpuDelta(s1, s2);
    const badReports = seq.non2xx + seq.errors + con.non2xx + con.errors;
    print(`Report latency, ${REPORTS} sequential: p50 ${seq.latency.p50} ms, p90 ${seq.latency.p90} ms, p99 ${seq.latency.p99} ms, max ${seq.latency.max} ms ` +
      `(${n1(seq.requests.average)} reports/s; per report Vigil ${n0((1000 * cs.vigil) / REPORTS)} ms and PostgreSQL ${n0((1000 * cs.pg) / REPORTS)} ms of CPU; ${busyLine(cs)}; load average ${la} before)`);
    print(`  ${REPORTS * 2} with ${REPORT_CLIENTS} clients: p50 ${con.latency.p50} ms, p90 ${con.latency.p90} ms, p99 ${con.latency.p99} ms, max ${con.latency.max} ms (${n1(con.requests.average)} reports/s; ${busyLine(cc)})` +
      `${badReports ? `; NON-200: ${badReports}` : ''}`);
    print(`  statements of one report (median of ${captureRuns} reports; the breakdowns run side by side on the pool's connections, so the report costs about the slowest):`);
    const lines = [...byLabel].map(([l, list]) => ({ l, ms: percentile(list.map((x) => x.ms), 50), n: list.length / captureRuns, q: list.sort((a, b) => b.ms - a.ms)[0] }))
      .sort((a, b) => b.ms - a.ms);
    const background = lines.filter((x) => x.l.startsWith('(background)')).reduce((a, x) => a + x.n * captureRuns, 0);
    lines.splice(0, lines.length, ...lines.filter((x) => !x.l.startsWith('(background)')));
    for (const x of lines) print(`  ${x.ms.toFixed(1).padStart(8)} ms  ${x.n === 1 ? '' : `${x.n}× `}${x.l}`);
    if (background) print(`  (and ${background} statements of the process's workers meanwhile, left out)`);
    const slowest = lines.find((x) => x.q.text.includes('analytics_daily'));
    if (slowest) print(`  e.g. ${slowest.l}: ${slowest.q.text.replace(/\s+/g, ' ').trim()}  -- ${JSON.stringify(slowest.q.values)}`);

    // EXPLAIN ANALYZE of each as sent, on a fresh connection with the server's settings.
    const ex = new pg.Client({ connectionString: url });
    await ex.connect();
    try {
      print(`  EXPLAIN (ANALYZE, BUFFERS) of each, as sent:`);
      let plan: string[] = [];
      let worst = 0;
      for (const x of lines.filter((y) => y.q.text.includes('analytics_'))) {
        const { rows } = await ex.query(`explain (analyze, buffers) ${x.q.text}`, x.q.values);
        const p = rows.map((r) => r['QUERY PLAN'] as string);
        const exec = Number(/Execution Time: ([\d.]+)/.exec(p.join('\n'))?.[1] ?? 0);
        const scan = p.find((l) => /Scan/.test(l))?.trim().replace(/\s+\(cost=[^)]*\)/, '') ?? '';
        const rowsRead = /actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(p.find((l) => /Scan/.test(l)) ?? '')?.[1];
        const buf = /Buffers: (.*)/.exec(p.find((l) => /Buffers/.test(l)) ?? '')?.[1] ?? '';
        print(`  ${exec.toFixed(1).padStart(8)} ms  ${x.l}: ${scan.replace(/ \(actual.*/, '')}, ${rowsRead ?? '?'} rows read, buffers ${buf}`);
        if (exec > worst) { worst = exec; plan = p; }
      }
      print(`  the slowest plan:`);
      for (const l of plan) print(`    ${l}`);
    } finally {
      await ex.end();
    }

    const p99 = Math.max(seq.latency.p99, con.latency.p99);
    const met = seq.latency.p99 < TARGET_REPORT_P99 && con.latency.p99 < TARGET_REPORT_P99;
    print(`Target: report p99 < ${TARGET_REPORT_P99} ms: ${met ? 'met' : 'MISSED'} (sequential ${seq.latency.p99} ms, ${REPORT_CLIENTS} clients ${con.latency.p99} ms)`);
    return { ok: badReports === 0 && total === EVENTS, summary: `(b) report over 365 days, all ten dimensions, ${n0(EVENTS)} events: p99 ${seq.latency.p99} ms sequential, ${p99} ms worst (target ${TARGET_REPORT_P99}: ${met ? 'met' : 'missed'}); drain ${n0(filled / (drainMs / 1000))} events/s` };
  } finally {
    await vigil.stop();
  }
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:analytics needs PostgreSQL: set BENCH_DATABASE_URL or run one on 127.0.0.1:5432');
  const dbName = new URL(db.url).pathname.slice(1);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-analytics-'));
  const env = { ...process.env, DATABASE_URL: db.url, MASTER_KEY, DATA_DIR: dataDir };
  const c = new pg.Client({ connectionString: db.url });
  const t0 = performance.now();
  const summaries: string[] = [];
  let ok = true;
  // Interrupted: the database goes all the same (the Vigil children stop when this process goes).
  const interrupted = (signal: string) => {
    console.error(`${signal}: dropping the bench database`);
    void db.drop().catch(() => undefined).finally(() => { fs.rmSync(dataDir, { recursive: true, force: true }); process.exit(130); });
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await c.connect();
    log(`database ${db.label}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    if (PARTS.includes('a')) { const r = await partA(env, dbName, c); ok &&= r.ok; summaries.push(r.summary); }
    if (PARTS.includes('b')) { const r = await partB(env, dbName, db.url, c); ok &&= r.ok; summaries.push(r.summary); }
    const cpus = os.cpus();
    console.log(`\n${summaries.join('\n')}`);
    console.log(`Node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM; ` +
      `database: ${db.label}; Vigil, PostgreSQL and the client share the machine with other work (load average now ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}); ` +
      `the whole benchmark took ${secs(performance.now() - t0)}`);
    if (!ok) process.exitCode = 1;
  } finally {
    await c.end().catch(() => undefined);
    await db.drop().catch((e) => console.error(`dropping the bench database: ${(e as Error).message}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) main().catch((e) => { console.error(e); process.exitCode = 1; });
