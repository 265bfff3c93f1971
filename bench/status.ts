/**
 * Status-page benchmark — `npm run bench:status`.
 *
 * A status page of 50 components (http monitors at a 5 s interval against a
 * local target) with 90 days of daily history and 24 hours of hourly history,
 * served by Vigil (a child without a worker: bench/status-vigil.ts) while a
 * separate worker (bench/checks-worker.ts) keeps checking the monitors and
 * writing results. autocannon (10 connections) loads the page's HTML (plain
 * and gzip) and its summary.json, and, as the baseline in the same run, a
 * bare Express 5 app serving the same HTML as a static file
 * (bench/status-bare.ts). Cases run in parts, in mirrored order. For each
 * Vigil case it counts the statements the serving process sent to
 * PostgreSQL and the page-cache loads per request.
 *
 * Targets: the HTML page at ≥ 0.5× the static file, p99 < 50 ms, and no
 * PostgreSQL query per request in the steady state.
 *
 * Environment: BENCH_DURATION (seconds per case, 10), BENCH_ROUNDS (parts, 2),
 * BENCH_DATABASE_URL (else a fresh database on the local PostgreSQL).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { benchDatabase, combine, machine, measure, startChild, table, type Child, type Measured, type Row } from './lib';
import type { StatusBareReady } from './status-bare';
import type { StatusVigilReady, StatusVigilStats } from './status-vigil';
import type { WorkerReady } from './checks-worker';

const COMPONENTS = 50;
const DAYS = 90;
const DURATION = Number(process.env.BENCH_DURATION || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2);
const MASTER_KEY = randomBytes(32).toString('base64');

function stats(v: Child<StatusVigilReady>): Promise<StatusVigilStats> {
  return new Promise((resolve) => {
    const on = (m: StatusVigilStats) => { if (m?.type === 'stats') { v.proc.off('message', on); resolve(m); } };
    v.proc.on('message', on);
    v.proc.send({ type: 'stats' });
  });
}

async function api<T>(v: StatusVigilReady, method: string, p: string, body?: unknown): Promise<T> {
  const res = await fetch(`${v.url}/api/v1${p}`, { method, headers: { authorization: `Bearer ${v.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json() as { data: T };
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** 90 days of daily roll-ups and 24 hours of hourly ones for each monitor, as the engine would have written them. */
async function history(c: pg.Client, ids: string[]): Promise<void> {
  const today = new Date(new Date().toISOString().slice(0, 10));
  await c.query(`insert into rollup_daily (monitor_id, day, checks, failures, degraded, downtime_seconds, response_sum_ms, response_count)
    select m, d::date, 17280, case when random() < 0.05 then (random() * 200)::int else 0 end, 0, 0, 17280 * (80 + (random() * 40)::int), 17280
    from unnest($1::text[]) m, generate_series($2::timestamptz - interval '${DAYS - 1} days', $2::timestamptz - interval '1 day', interval '1 day') d
    on conflict do nothing`, [ids, today]);
  await c.query(`insert into rollup_hourly (monitor_id, hour, checks, failures, degraded, response_sum_ms, response_count)
    select m, h, 720, 0, 0, 720 * (80 + (random() * 40)::int), 720
    from unnest($1::text[]) m, generate_series(date_trunc('hour', now()) - interval '23 hours', date_trunc('hour', now()) - interval '1 hour', interval '1 hour') h
    on conflict do nothing`, [ids]);
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:status needs the local PostgreSQL (or BENCH_DATABASE_URL): the worker child shares the database');
  const target = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  const env = { ...process.env, DATABASE_URL: db.url, MASTER_KEY, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-status-')) };
  const vigil = await startChild<StatusVigilReady>('status-vigil.ts', env);
  const v = vigil.ready;
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  let worker: Child<WorkerReady> | undefined;
  let bare: Child<StatusBareReady> | undefined;
  try {
    const ids: string[] = [];
    for (let i = 0; i < COMPONENTS; i++) {
      const m = await api<{ id: string }>(v, 'POST', '/monitors', { name: `service-${i}`, kind: 'http', workspaceId: v.workspaceId, intervalSeconds: 5, config: JSON.stringify({ url: `${targetUrl}/s${i}`, timeoutSeconds: 5 }) });
      ids.push(m.id);
    }
    await history(c, ids);
    const page = await api<{ id: string; slug: string }>(v, 'POST', '/status-pages', { name: 'Bench status', workspaceId: v.workspaceId });
    await api(v, 'PATCH', `/status-pages/${page.id}`, { historyDays: DAYS, showResponseTimes: true, showIncidentHistory: true });
    for (const id of ids) await api(v, 'POST', `/status-pages/${page.id}/components`, { monitorId: id });
    worker = await startChild<WorkerReady>('checks-worker.ts', { ...env, LOG_LEVEL: 'warn' });

    const pageUrl = `${v.url}/status/${page.slug}`;
    const html = await (await fetch(pageUrl)).text();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-static-'));
    fs.writeFileSync(path.join(dir, 'index.html'), html);
    bare = await startChild<StatusBareReady>('status-bare.ts', process.env, { type: 'file', dir });
    const staticUrl = `${bare.ready.url}/index.html`;
    // Warm up (the first visit loads the page; the worker's first checks change statuses from pending).
    await new Promise((r) => setTimeout(r, 8000));
    for (const u of [pageUrl, `${pageUrl}/api/v2/summary.json`, staticUrl]) await measure(u, {}, 2);

    const cases: { name: string; url: string; headers: Record<string, string>; vigil: boolean }[] = [
      { name: `bare Express: static file (${Math.round(html.length / 1024)} KB)`, url: staticUrl, headers: {}, vigil: false },
      { name: 'Vigil: status page HTML', url: pageUrl, headers: {}, vigil: true },
      { name: 'Vigil: status page HTML (gzip)', url: pageUrl, headers: { 'accept-encoding': 'gzip' }, vigil: true },
      { name: 'Vigil: api/v2/summary.json', url: `${pageUrl}/api/v2/summary.json`, headers: {}, vigil: true },
    ];
    const runs = new Map<string, Measured[]>(cases.map((k) => [k.name, []]));
    const db0 = new Map<string, { queries: number; loads: number; requests: number }>(cases.map((k) => [k.name, { queries: 0, loads: 0, requests: 0 }]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 === 0 ? cases : [...cases].reverse()) {
        const before = await stats(vigil);
        const m = await measure(k.url, k.headers, DURATION / ROUNDS);
        const after = await stats(vigil);
        runs.get(k.name)!.push(m);
        const d = db0.get(k.name)!;
        d.queries += after.queries - before.queries;
        d.loads += after.loads - before.loads;
        d.requests += m.total;
      }
    }
    const baseline = combine(runs.get(cases[0].name)!);
    const rows: Row[] = cases.map((k, i) => ({ name: k.name, m: combine(runs.get(k.name)!), baseline: i === 0 ? null : baseline }));
    console.log(`\n${table(rows)}\n`);
    for (const k of cases.filter((x) => x.vigil)) {
      const d = db0.get(k.name)!;
      console.log(`${k.name}: ${d.requests.toLocaleString('en-US')} requests, ${d.queries} PostgreSQL statements from the serving process (${(d.queries / Math.max(1, d.requests)).toFixed(5)} per request), ${d.loads} page loads`);
    }
    const htmlRow = rows[1].m;
    const bad = rows.reduce((a, r) => a + r.m.bad, 0);
    console.log(`\nTargets: HTML ${(htmlRow.rps / baseline.rps).toFixed(2)}× the static file (≥ 0.5×: ${htmlRow.rps / baseline.rps >= 0.5 ? 'met' : 'MISSED'}); ` +
      `p99 ${htmlRow.p99} ms (< 50 ms: ${htmlRow.p99 < 50 ? 'met' : 'MISSED'}); non-2xx or errors: ${bad}`);
    console.log(machine(db.label) + `; ${COMPONENTS} components, ${DAYS} days of history, the worker checking them every 5 s meanwhile`);
    if (bad > 0) process.exitCode = 1;
    fs.rmSync(dir, { recursive: true, force: true });
  } finally {
    await bare?.stop();
    await worker?.stop();
    await vigil.stop();
    await c.end().catch(() => undefined);
    target.close();
    await db.drop().catch(() => undefined);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
