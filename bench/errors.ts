/**
 * Error-ingestion benchmark — `npm run bench:errors`.
 *
 * Vigil (child, bench/errors-vigil.ts, as `npm start` runs it) on a fresh
 * database takes Sentry envelopes at `POST /api/<ref>/envelope/` from a
 * closed-loop client (bench/errors-load.ts) for BENCH_DURATION seconds after
 * a warm-up. Envelopes (bench/errors-events.ts) are built in advance: 200
 * distinct issues over BENCH_PROJECTS projects (half Node, half browser),
 * exception chains of 1–3 with causes, 10–40 frames, tags, user, contexts,
 * breadcrumbs, 2–20 KB each; the key in the `sentry_key` query as the SDKs
 * send it; Node-style requests chunked with no Content-Type, half of them
 * gzip; browser-style ones `text/plain` with a Content-Length. Each request
 * carries a new event id.
 *
 * Prints accepted events/s, p50/p99 acknowledgement latency, non-200 answers
 * by status, Vigil's CPU per 1,000 events (utime+stime of the server process
 * from /proc) and its peak RSS, PostgreSQL's and the client's CPU; then waits
 * until grouping has taken every stored event and checks that every
 * acknowledged event is counted: the sum of `timesSeen` over
 * `GET /api/v1/errors/issues?status=all` equals the 200 answers, every
 * acknowledged id is stored, the issues are exactly the 200 sent (each holds
 * the events of one of them). Also the rate the grouper reached after the
 * load. Targets (2 cores): ≥ 2,000 events/s accepted with p99 < 50 ms, none lost.
 *
 * Ingestion limits (buckets sentry_project, sentry_org) are raised through
 * their configuration, ERRORS_PER_PROJECT_PER_MINUTE and
 * ERRORS_PER_ORGANIZATION_PER_HOUR.
 *
 * Environment:
 *   BENCH_DURATION     seconds of measured load (20); BENCH_WARMUP seconds before it (3)
 *   BENCH_CONNECTIONS  concurrent connections (32)
 *   BENCH_PROJECTS     error projects (4); BENCH_VARIANTS events per issue in the pool (10)
 *   BENCH_GROUPER      inline (default: the grouper runs in the server process, as `npm start`)
 *                      or after (a server without worker; `npm run worker` started once the load ends,
 *                      so the figure is the grouper alone)
 *   BENCH_RATE_LIMIT_STORE  postgres (the default with a database), memory or redis
 *   BENCH_DATABASE_URL database to use (left as is); otherwise a fresh vigil_bench_<pid> on
 *                      postgres://postgres@127.0.0.1:5432, dropped at the end
 *   BENCH_CPU_PROF     a folder: a V8 CPU profile of the Vigil child over the measured load is written
 *                      into it (`--cpu-prof` for the worker in mode after)
 *   BENCH_SQL_TIMING=1 print the server's SQL wall time by statement over the measured load
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pg from 'pg';
import { groupEvent } from '../src/errors/grouping';
import { api, ask, benchDatabase, memKb, startChild, type Child } from './lib';
import { machineBusy, postgresDelta, postgresSnapshot, processCpu } from './checks-cpu';
import { buildPool, type PoolBody } from './errors-events';
import { profileLines } from './errors-profile';
import { load, pct, type LoadResult, type Route } from './errors-load';
import type { ErrorsVigilReady } from './errors-vigil';
import type { SqlTime } from './sqlTiming';

const ISSUES = 200;
const DURATION = Number(process.env.BENCH_DURATION || 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);
const PROJECTS = Number(process.env.BENCH_PROJECTS || 4);
const VARIANTS = Number(process.env.BENCH_VARIANTS || 10);
const GROUPER = process.env.BENCH_GROUPER || 'inline';
const STORE = process.env.BENCH_RATE_LIMIT_STORE || 'postgres';
const GROUP_TIMEOUT = Number(process.env.BENCH_GROUP_TIMEOUT || 180) * 1000;
const TARGET_RATE = 2000;
const TARGET_P99 = 50;
const MASTER_KEY = randomBytes(32).toString('base64');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const n0 = (n: number) => Math.round(n).toLocaleString('en-US');
const n1 = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

interface Project { id: string; ref: number; publicKey: string; dsn: string; platform: string }

/** CPU seconds so far: Vigil, the grouping worker (mode after), this database's PostgreSQL, this process, the machine. */
function cpuNow(vigil: number, worker: number | undefined, db: string) {
  const me = process.cpuUsage();
  return { t: performance.now(), vigil: processCpu(vigil), worker: worker ? processCpu(worker) : 0, pg: postgresSnapshot(db), me: (me.user + me.system) / 1e6, busy: machineBusy() };
}
type Cpu = ReturnType<typeof cpuNow>;
function cpuDelta(a: Cpu, b: Cpu) {
  const pgs = postgresDelta(a.pg, b.pg).own;
  const s = (b.t - a.t) / 1000;
  const busy = b.busy - a.busy;
  return { s, vigil: b.vigil - a.vigil, worker: b.worker - a.worker, pg: pgs, me: b.me - a.me, busy, other: busy - (b.vigil - a.vigil) - (b.worker - a.worker) - pgs - (b.me - a.me) };
}

/** Checks the pool: each issue's events share one fingerprint, and the issues are ISSUES distinct ones. */
function checkPool(pool: PoolBody[], projects: Project[]): void {
  const byIssue = new Map<number, string>();
  for (const p of pool) {
    const tail = p.style === 'node-gzip' ? zlib.gunzipSync(p.tail) : p.tail;
    const text = p.a + 'x'.repeat(32) + p.b + 'x'.repeat(32) + tail.toString();
    const fp = `${projects[p.project].id}:${groupEvent(JSON.parse(text.split('\n')[2])).fingerprint}`;
    const seen = byIssue.get(p.issue);
    if (seen !== undefined && seen !== fp) throw new Error(`pool: events of issue ${p.issue} group apart`);
    byIssue.set(p.issue, fp);
  }
  if (new Set(byIssue.values()).size !== ISSUES) throw new Error(`pool: ${new Set(byIssue.values()).size} distinct fingerprints, not ${ISSUES}`);
}

function poolLine(pool: PoolBody[]): string {
  const sizes = pool.map((p) => p.size).sort((a, b) => a - b);
  const kb = (b: number) => (b / 1024).toFixed(1);
  const share = (s: PoolBody['style']) => Math.round((100 * pool.filter((p) => p.style === s).length) / pool.length);
  const frames = pool.map((p) => p.frames);
  const chains = [1, 2, 3].map((c) => Math.round((100 * pool.filter((p) => p.chain === c).length) / pool.length));
  const wire = pool.reduce((a, p) => a + p.tail.length, 0) / pool.length;
  return `pool of ${n0(pool.length)} envelopes (${ISSUES} issues × ${VARIANTS}), ${kb(sizes[0])}–${kb(sizes.at(-1)!)} KB (median ${kb(sizes[sizes.length >> 1])} KB, ` +
    `mean on the wire ${kb(wire)} KB), ${Math.min(...frames)}–${Math.max(...frames)} frames, chains of 1/2/3: ${chains.join('/')}%; ` +
    `Node SDK style (no Content-Type, chunked) ${share('node')}%, the same gzip ${share('node-gzip')}%, browser style (text/plain, Content-Length) ${share('browser')}%`;
}

/** Waits until no stored event is ungrouped (or the timeout); returns when, and what the table held meanwhile. */
async function grouped(c: pg.Client, expected: number, timeout: number): Promise<{ at: number; total: number; ungrouped: number }> {
  const end = performance.now() + timeout;
  for (;;) {
    const { rows: [r] } = await c.query(`select count(*)::int as total, count(*) filter (where issue_id is null)::int as ungrouped from error_events`);
    if ((r.ungrouped === 0 && r.total >= expected) || performance.now() > end) return { at: performance.now(), total: r.total, ungrouped: r.ungrouped };
    await sleep(100);
  }
}

async function main(): Promise<void> {
  if (!['inline', 'after'].includes(GROUPER)) throw new Error('BENCH_GROUPER is inline or after');
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:errors needs PostgreSQL: set BENCH_DATABASE_URL or run one on 127.0.0.1:5432');
  const dbName = new URL(db.url).pathname.slice(1);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-errors-'));
  const profDir = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
  const prof = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const env = {
    ...process.env, DATABASE_URL: db.url, MASTER_KEY, DATA_DIR: dataDir, RATE_LIMIT_STORE: STORE,
    ERRORS_PER_PROJECT_PER_MINUTE: '1000000000', ERRORS_PER_ORGANIZATION_PER_HOUR: '1000000000',
  };
  const c = new pg.Client({ connectionString: db.url });
  let vigil: Child<ErrorsVigilReady> | undefined;
  let worker: ChildProcess | undefined;
  try {
    vigil = await startChild<ErrorsVigilReady>('errors-vigil.ts', { ...env, WORKER: GROUPER === 'inline' ? 'true' : 'false' });
    const v = vigil.ready;
    await c.connect();
    const projects: Project[] = [];
    for (let i = 0; i < PROJECTS; i++) {
      const platform = i % 2 === 0 ? 'node' : 'javascript';
      projects.push({ ...await api<Project>(v, 'POST', '/errors/projects', { name: `bench-${platform}-${i}`, workspaceId: v.workspaceId, platform }), platform });
    }
    let t = performance.now();
    const pool = buildPool(ISSUES, VARIANTS, PROJECTS, projects.map((p) => p.publicKey));
    checkPool(pool, projects);
    console.error(`built and checked the ${poolLine(pool)} in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const { hostname, port } = new URL(v.url);
    const routes = projects.map((p) => {
      const q = (client: string) => `/api/${p.ref}/envelope/?sentry_version=7&sentry_key=${p.publicKey}&sentry_client=${encodeURIComponent(client)}`;
      return {
        node: { path: q('sentry.javascript.node/11.12.0'), headers: 'User-Agent: sentry.javascript.node/11.12.0\r\nAccept: */*\r\n' },
        'node-gzip': { path: q('sentry.javascript.node/11.12.0'), headers: 'User-Agent: sentry.javascript.node/11.12.0\r\nAccept: */*\r\nContent-Encoding: gzip\r\n' },
        browser: {
          path: q('sentry.javascript.browser/11.12.0'),
          headers: 'Content-Type: text/plain;charset=UTF-8\r\nOrigin: https://shop.example.com\r\nReferer: https://shop.example.com/\r\nAccept: */*\r\n' +
            'User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n',
        },
      };
    });
    const route: Route = (p) => routes[p.project][p.style];

    // Warm-up (counted in the verification, not in the figures).
    const warm: LoadResult | null = WARMUP > 0 ? await load(hostname, Number(port), pool, route, CONNECTIONS, WARMUP * 1000) : null;
    if (warm && (warm.byStatus.get('200') ?? 0) === 0) throw new Error(`warm-up: no event accepted (${JSON.stringify([...warm.byStatus])})`);

    const sqlTiming = process.env.BENCH_SQL_TIMING === '1';
    if (sqlTiming) await ask(vigil, { type: 'sql' });
    const before = (await c.query(`select count(*) filter (where issue_id is not null)::int as grouped from error_events`)).rows[0].grouped as number;
    if (profDir) vigil.proc.send({ type: 'profile', dir: profDir });
    const c0 = cpuNow(v.pid, undefined, dbName);
    const m = await load(hostname, Number(port), pool, route, CONNECTIONS, DURATION * 1000);
    const c1 = cpuNow(v.pid, undefined, dbName);
    const profile = profDir ? (await ask<{ file: string | null }>(vigil, { type: 'profile', stop: true })).file : null;
    const rssIngest = memKb(v.pid, 'VmHWM');
    const top = sqlTiming ? (await ask<{ top: SqlTime[] }>(vigil, { type: 'sql' })).top : [];
    const atEnd = (await c.query(`select count(*)::int as total, count(*) filter (where issue_id is not null)::int as grouped from error_events`)).rows[0] as { total: number; grouped: number };

    // Grouping: wait until every stored event is in an issue.
    const acks = (warm?.byStatus.get('200') ?? 0) + (m.byStatus.get('200') ?? 0);
    if (GROUPER === 'after') {
      worker = spawn(process.execPath, [...prof, '--import', 'tsx', path.join(__dirname, '../src/worker-main.ts')], { env: { ...env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'] });
    }
    const g0 = performance.now();
    const cg0 = cpuNow(v.pid, worker?.pid, dbName);
    const done = await grouped(c, acks, GROUP_TIMEOUT);
    const cg1 = cpuNow(v.pid, worker?.pid, dbName);
    const groupMs = done.at - g0;

    // Verification.
    const issues = await api<{ id: string; timesSeen: number }[]>(v, 'GET', '/errors/issues?status=all&limit=200');
    const timesSeen = issues.reduce((a, i) => a + i.timesSeen, 0);
    const { rows: [counts] } = await c.query(`select count(*)::int as events, count(distinct event_id)::int as ids, count(distinct issue_id)::int as issues,
      (select count(*)::int from error_issues) as issue_rows, (select coalesce(sum(times_seen), 0)::int from error_issues) as seen from error_events`);
    const stored = new Map<string, string | null>((await c.query(`select event_id, issue_id from error_events`)).rows.map((r) => [r.event_id as string, r.issue_id as string | null]));
    const acked = new Map([...(warm?.acked ?? []), ...m.acked]);
    const missing = [...acked.keys()].filter((id) => !stored.has(id));
    const unacked = [...stored.keys()].filter((id) => !acked.has(id)).length;
    // Each Vigil issue must hold the events of exactly one of the pool's issues, and the reverse.
    const ours = new Map<string, Set<number>>();
    const theirs = new Map<number, Set<string>>();
    for (const [id, issue] of acked) {
      const iss = stored.get(id);
      if (!iss) continue;
      (ours.get(iss) ?? ours.set(iss, new Set()).get(iss)!).add(issue);
      (theirs.get(issue) ?? theirs.set(issue, new Set()).get(issue)!).add(iss);
    }
    const mixed = [...ours.values()].filter((s) => s.size > 1).length;
    const split = [...theirs.values()].filter((s) => s.size > 1).length;

    // Report.
    const ok = m.byStatus.get('200') ?? 0;
    const rate = ok / (m.ms / 1000);
    const p50 = pct(m.latency, 50);
    const p99 = pct(m.latency, 99);
    const cpu = cpuDelta(c0, c1);
    const cpuG = cpuDelta(cg0, cg1);
    const secs = m.perSecond.slice(0, Math.floor(m.ms / 1000)).map((x) => x ?? 0);
    const non200 = [...m.byStatus].filter(([s]) => s !== '200').map(([s, k]) => `${s}: ${n0(k)}`);
    const warmNon200 = [...(warm?.byStatus ?? [])].filter(([s]) => s !== '200').map(([s, k]) => `${s}: ${n0(k)}`);
    const cpus = os.cpus();
    console.log(`\nError ingestion, ${DURATION} s after a ${WARMUP} s warm-up, ${CONNECTIONS} connections, ${PROJECTS} projects, grouper ${GROUPER === 'inline' ? 'in the server process' : 'in a worker started after the load'}, rate limits in ${STORE}`);
    console.log(`  ${poolLine(pool)}`);
    console.log(`Accepted: ${n0(ok)} events in ${(m.ms / 1000).toFixed(1)} s = ${n0(rate)} events/s (per second min ${n0(Math.min(...secs))}, max ${n0(Math.max(...secs))}); ` +
      `${n1(m.bytes / m.ms / 1024)} MB/s of request bodies on the wire`);
    console.log(`Acknowledgement latency: p50 ${p50.toFixed(1)} ms, p90 ${pct(m.latency, 90).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, p99.9 ${pct(m.latency, 99.9).toFixed(1)} ms, max ${(m.latency.max / 1e6).toFixed(1)} ms`);
    console.log(`Non-200 answers: ${non200.length ? non200.join(', ') : 'none'}${warmNon200.length ? ` (warm-up: ${warmNon200.join(', ')})` : ''}${m.wrongId ? `; 200 with the wrong id: ${m.wrongId}` : ''}`);
    console.log(`Vigil CPU: ${n1(cpu.vigil)} s over ${cpu.s.toFixed(1)} s = ${n0((1000 * cpu.vigil) / Math.max(1, ok) * 1000)} ms per 1,000 events (${Math.round((100 * cpu.vigil) / cpu.s)}% of a core` +
      `${GROUPER === 'inline' ? ', grouping included' : ''}); peak RSS ${n0(rssIngest / 1024)} MB (after grouping ${n0(memKb(v.pid, 'VmHWM') / 1024)} MB)`);
    console.log(`Elsewhere during the load: PostgreSQL ${n1(cpu.pg)} s (${n0((1000 * cpu.pg) / Math.max(1, ok) * 1000)} ms per 1,000 events), this client ${n1(cpu.me)} s, ` +
      `other processes ${n1(cpu.other)} s; machine busy ${Math.round((100 * cpu.busy) / (cpu.s * cpus.length))}% of ${cpus.length} cores`);
    const ingestGrouped = atEnd.grouped - before;
    const backlog = atEnd.total - atEnd.grouped;
    console.log(`Grouping: ${n0(ingestGrouped)} events grouped during the load (${n0(ingestGrouped / (m.ms / 1000))}/s); ${n0(backlog)} ungrouped when it ended, ` +
      `${done.ungrouped === 0 ? `all grouped ${(groupMs / 1000).toFixed(1)} s later = ${backlog > 0 ? `${n0(backlog / (groupMs / 1000))} events/s` : '—'}` : `${n0(done.ungrouped)} STILL UNGROUPED after ${GROUP_TIMEOUT / 1000} s`}` +
      ` (CPU meanwhile: ${GROUPER === 'after' ? `worker ${n1(cpuG.worker)} s, ` : ''}Vigil ${n1(cpuG.vigil)} s, PostgreSQL ${n1(cpuG.pg)} s)`);
    const lost = acks - timesSeen;
    console.log(`Verification: ${n0(acks)} events acknowledged (warm-up included); issues' timesSeen sum to ${n0(timesSeen)} (API) / ${n0(counts.seen)} (table); ` +
      `${n0(counts.events)} events stored (${n0(counts.ids)} distinct ids); ${lost === 0 && missing.length === 0 ? 'none lost' : `LOST ${n0(lost)} by timesSeen, ${n0(missing.length)} acknowledged ids not stored`}` +
      `${unacked ? `; ${n0(unacked)} stored but not acknowledged` : ''}`);
    console.log(`  issues: ${issues.length} listed, ${counts.issue_rows} in the table (expected ${ISSUES})${mixed ? `; ${mixed} issues mix events of different sent issues` : ''}${split ? `; ${split} sent issues split over several` : ''}`);
    for (const id of missing.slice(0, 5)) console.log(`  NOT STORED: ${id}`);
    if (profile) console.log(`${profileLines(profile, ok).join('\n')}\n  (profile: ${profile})`);
    if (top.length) {
      console.log(`Vigil's SQL wall time over the load (summed over connections), by statement:`);
      for (const q of top) console.log(`  ${(q.ms / 1000).toFixed(2).padStart(7)} s ${String(q.n).padStart(7)}× ${(q.ms / q.n).toFixed(2).padStart(7)} ms  ${q.text}`);
    }
    console.log(`Node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM; ` +
      `database: ${db.label}; Vigil, PostgreSQL and this client share the machine`);
    const none = lost === 0 && missing.length === 0 && m.wrongId === 0;
    const right = issues.length === ISSUES && counts.issue_rows === ISSUES && mixed === 0 && split === 0;
    console.log(`Targets: ≥ ${n0(TARGET_RATE)} events/s: ${rate >= TARGET_RATE ? 'met' : 'MISSED'} (${n0(rate)}); p99 < ${TARGET_P99} ms: ${p99 < TARGET_P99 ? 'met' : 'MISSED'} (${p99.toFixed(1)} ms); ` +
      `none lost: ${none ? 'met' : 'MISSED'}; ${ISSUES} issues: ${right ? 'met' : 'MISSED'}`);
    if (!none || !right) process.exitCode = 1;
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
