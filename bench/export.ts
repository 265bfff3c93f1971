/**
 * Export benchmark — `npm run bench:export`.
 *
 * Vigil as `npm start` runs it (scripts/run/start.mjs: the compiled server,
 * built first when dist/ is stale; WORKER=false, nothing but the API) on a
 * fresh database, with the organisation its first start makes. BENCH_MONITORS
 * (460) http monitors are created through the API, then BENCH_HOURS (2,208:
 * the 92 days of the hourly export window) hourly roll-ups each are written
 * in SQL (460 × 2,208 = 1,015,680 rows). Then, one after the other:
 *   GET /export/uptime-hourly             (CSV)
 *   GET /export/uptime-hourly?format=json (JSON)
 *   GET /export?format=csv                (the zip, with every other entity)
 * over the whole window, read by a client that counts bytes and lines and
 * keeps nothing, while the server's RSS is sampled from /proc every 20 ms.
 *
 * Prints per case rows, bytes, duration, rows/s and the server's RSS before
 * and at its peak during the download (and VmHWM, the process's lifetime
 * peak). Target: the million-row hourly export keeps the process under
 * 200 MB RSS.
 *
 * Environment:
 *   BENCH_MONITORS     monitors (460); BENCH_HOURS hours per monitor (2208, at most 2208)
 *   BENCH_ONLY         csv, json or zip: that case only
 *   BENCH_NODE_OPTIONS NODE_OPTIONS of the server only (e.g. --max-old-space-size=128: V8
 *                      otherwise lets the heap grow to ~4× its live size between full
 *                      collections, which is most of the RSS growth during a long export)
 *   BENCH_DATABASE_URL database to use (left as is); otherwise a fresh vigil_bench_<pid> on
 *                      postgres://postgres@127.0.0.1:5432, dropped at the end
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { benchDatabase } from './lib';

/** The server under test: its address, process and the owner key of its first start. */
interface Vigil { url: string; pid: number; apiKey: string; organizationId: string; workspaceId: string; proc: ChildProcess }

/** Starts what `npm start` runs (node with package.json's flags, scripts/run/start.mjs) and reads its address and first-start key from stdout. */
async function startVigil(env: NodeJS.ProcessEnv): Promise<Vigil> {
  const root = path.join(__dirname, '..');
  const script = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const flags = script.split(' ').filter((w) => w.startsWith('--'));
  const proc = spawn(process.execPath, [...flags, path.join(root, 'scripts/run/start.mjs')], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const { url, apiKey } = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening at (\S+) [\s\S]*shown once\):\s+(\S+)/.exec(out);
      if (m) resolve({ url: m[1], apiKey: m[2] });
    });
    proc.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
  });
  proc.removeAllListeners('exit');
  const get = async (p: string) => ((await (await fetch(`${url}/api/v1${p}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { data: any }).data;
  const me = await get('/me');
  const [workspace] = await get('/workspaces');
  return { url, pid: proc.pid!, apiKey, organizationId: me.organization.id, workspaceId: workspace.id, proc };
}

async function stopVigil(v: Vigil | undefined): Promise<void> {
  if (!v || v.proc.exitCode !== null) return;
  await new Promise<void>((resolve) => { v.proc.once('exit', () => resolve()); v.proc.kill('SIGTERM'); });
}

const MONITORS = Number(process.env.BENCH_MONITORS || 460);
const HOURS = Math.min(Number(process.env.BENCH_HOURS || 2208), 2208);
const TARGET_MB = 200;
const H = 3_600_000;

const n0 = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (kb: number) => (kb / 1024).toFixed(1);

/** kB of a /proc/<pid>/status field (VmRSS, VmHWM). */
function memKb(pid: number, field: string): number {
  try {
    return Number(new RegExp(`^${field}:\\s*(\\d+)`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function createMonitors(v: Vigil): Promise<void> {
  let next = 0;
  const one = async () => {
    for (let i = next++; i < MONITORS; i = next++) {
      const res = await fetch(`${v.url}/api/v1/monitors`, {
        method: 'POST', headers: { authorization: `Bearer ${v.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Bench monitor ${i}`, kind: 'http', workspaceId: v.workspaceId, config: JSON.stringify({ url: `https://bench-${i}.example/` }) }),
      });
      if (res.status !== 201) throw new Error(`createMonitor: ${res.status} ${await res.text()}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, one));
}

interface Case { name: string; path: string; rows: number; bytes: number; seconds: number; rssBeforeKb: number; rssPeakKb: number }

/** Downloads `p`, counting bytes and lines, while sampling the server's RSS. */
async function run(v: Vigil, name: string, p: string, countRows: (lines: number) => number): Promise<Case> {
  const rssBeforeKb = memKb(v.pid, 'VmRSS');
  let rssPeakKb = rssBeforeKb;
  const sampler = setInterval(() => { rssPeakKb = Math.max(rssPeakKb, memKb(v.pid, 'VmRSS')); }, 20);
  const t0 = performance.now();
  const res = await fetch(`${v.url}/api/v1${p}`, { headers: { authorization: `Bearer ${v.apiKey}`, 'accept-encoding': 'identity' } });
  if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  rssPeakKb = Math.max(rssPeakKb, memKb(v.pid, 'VmRSS'));
  return { name, path: p, rows: countRows(lines), bytes, seconds, rssBeforeKb, rssPeakKb };
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:export needs PostgreSQL: set BENCH_DATABASE_URL or run one on 127.0.0.1:5432');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-export-'));
  const env = { ...process.env, DATABASE_URL: db.url, MASTER_KEY: randomBytes(32).toString('base64'), DATA_DIR: dataDir };
  const c = new pg.Client({ connectionString: db.url });
  let vigil: Vigil | undefined;
  try {
    vigil = await startVigil({
      ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', WORKER: 'false', BOOTSTRAP_PLAN: 'enterprise', RATE_LIMIT_STORE: 'memory',
      RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000', RATE_LIMIT_EXPORT: '100000000',
      NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS ?? '',
    });
    const v = vigil;
    await c.connect();
    let t = performance.now();
    await createMonitors(v);
    console.log(`${n0(MONITORS)} monitors created through the API in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const to = new Date(Math.floor(Date.now() / H) * H);
    const from = new Date(to.getTime() - HOURS * H);
    t = performance.now();
    const { rowCount } = await c.query(`insert into rollup_hourly (monitor_id, hour, checks, failures, degraded, response_sum_ms, response_count)
      select m.id, $2::timestamptz - g * interval '1 hour', 12, (g % 97 = 0)::int, (g % 89 = 0)::int, 12 * (80 + g % 40), 12
      from monitors m, generate_series(1, $3::int) g where m.organization_id = $1`, [v.organizationId, to, HOURS]);
    await c.query('analyze rollup_hourly');
    console.log(`${n0(rowCount ?? 0)} hourly roll-ups inserted in SQL in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const window = `from=${from.toISOString()}&to=${to.toISOString()}`;
    const only = process.env.BENCH_ONLY;
    const cases: Case[] = [];
    if (!only || only === 'csv') cases.push(await run(v, 'uptime-hourly, CSV', `/export/uptime-hourly?${window}`, (l) => l - 1));
    if (!only || only === 'json') cases.push(await run(v, 'uptime-hourly, JSON', `/export/uptime-hourly?format=json&${window}`, (l) => l - 2));
    if (!only || only === 'zip') cases.push(await run(v, 'everything, zip of CSV', `/export?${window}`, () => NaN));
    const hwm = memKb(v.pid, 'VmHWM');
    console.log(`\nNode ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM; database: ${db.label}; server NODE_OPTIONS: ${process.env.BENCH_NODE_OPTIONS || '(none)'}`);
    console.log('\n| Export | Rows | Bytes | Duration (s) | Rows/s | Server RSS before (MB) | Server RSS peak (MB) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const x of cases) {
      console.log(`| ${x.name} | ${Number.isNaN(x.rows) ? '—' : n0(x.rows)} | ${n0(x.bytes)} | ${x.seconds.toFixed(1)} | ${Number.isNaN(x.rows) ? '—' : n0(x.rows / x.seconds)} | ${mb(x.rssBeforeKb)} | ${mb(x.rssPeakKb)} |`);
    }
    const peak = Math.max(...cases.map((x) => x.rssPeakKb));
    console.log(`\nServer VmHWM (lifetime peak RSS, startup and monitor creation included): ${mb(hwm)} MB`);
    console.log(`Target: peak RSS during the million-row export < ${TARGET_MB} MB — ${peak / 1024 < TARGET_MB ? 'met' : 'NOT met'} (${mb(peak)} MB)`);
    for (const x of cases) if (!Number.isNaN(x.rows) && x.rows !== rowCount) throw new Error(`${x.name}: ${x.rows} rows exported, ${rowCount} in the table`);
  } finally {
    await c.end().catch(() => undefined);
    await stopVigil(vigil);
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
