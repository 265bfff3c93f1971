/**
 * API read benchmark — `npm run bench:api`.
 *
 * Measures `GET /api/v1/monitors/{id}` and `GET /api/v1/monitors` (JSON, and
 * protobuf via `Accept: application/x-protobuf`) on an organisation of 1,000
 * monitors created through the API, and compares each with a bare Express 5
 * app serving the same JSON bytes from memory. Vigil and the bare app each run
 * in a child process; autocannon (10 connections, pipelining 1) runs here. Each
 * case is measured in parts, in mirrored order (see main).
 * Prints requests/s, p50/p99 latency and the ratio to the bare app as a
 * markdown table, plus the machine it ran on.
 *
 * Targets: single read ≥ 0.5× the bare app; protobuf at least as fast as JSON.
 *
 * Environment:
 *   BENCH_DATABASE_URL  PostgreSQL database to use (left as is); otherwise a
 *                       fresh `vigil_bench_<pid>` on postgres://postgres@127.0.0.1:5432
 *                       (dropped at the end), or the embedded server if that is down.
 *   BENCH_DURATION      seconds per case (default 10), in BENCH_ROUNDS parts (default 4); BENCH_WARMUP (default 2).
 *   BENCH_CPU_PROF      a folder: run the Vigil child with `--cpu-prof` into it.
 *   BENCH_ONLY          `single` or `list`: run only those cases (for profiling).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchDatabase, combine, cpuMs, machine, measure, startChild, table, type Child, type Measured, type Row } from './lib';
import type { BarePayloads, BareReady } from './serve-bare';
import type { VigilReady } from './serve-vigil';

const MONITORS = 1000;
const PROTOBUF = 'application/x-protobuf';

/** Student's t for a two-sided 95% interval by degrees of freedom (1 to 12; beyond, about 2). */
const T95 = [Infinity, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18];

/** The 95% confidence interval of the mean of `xs`. */
function interval(xs: number[]): { low: number; high: number } {
  const n = xs.length;
  const mean = xs.reduce((a, x) => a + x, 0) / n;
  if (n < 2) return { low: mean, high: mean };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  const half = (T95[n - 1] ?? 2) * sd / Math.sqrt(n);
  return { low: mean - half, high: mean + half };
}

/** Creates the monitors through the API, `parallel` requests at a time; returns their ids in order. */
async function seed(v: VigilReady, parallel = 20): Promise<string[]> {
  const ids: string[] = new Array(MONITORS);
  const one = async (i: number) => {
    const res = await fetch(`${v.url}/api/v1/monitors`, {
      method: 'POST',
      headers: { authorization: `Bearer ${v.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: `svc-${i} health`, kind: 'http', workspaceId: v.workspaceId, intervalSeconds: 60,
        config: JSON.stringify({ url: `https://svc-${i}.example.com/health` }),
        tags: [i % 5 === 0 ? 'staging' : 'production', `team-${i % 12}`, ['eu-west', 'us-east', 'ap-south'][i % 3]],
      }),
    });
    const body = await res.json() as { data?: { id: string } };
    if (!res.ok || !body.data) throw new Error(`creating monitor ${i}: HTTP ${res.status} ${JSON.stringify(body)}`);
    ids[i] = body.data.id;
  };
  for (let i = 0; i < MONITORS; i += parallel) {
    await Promise.all(Array.from({ length: Math.min(parallel, MONITORS - i) }, (_, k) => one(i + k)));
  }
  return ids;
}

/** One GET as the benchmark will send it: body bytes and content type, 2xx enforced. */
async function get(url: string, headers: Record<string, string>): Promise<{ body: Buffer; type: string }> {
  const res = await fetch(url, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status} ${body.toString('utf8').slice(0, 300)}`);
  return { body, type: res.headers.get('content-type') ?? '' };
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-'));
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];
  let vigil: Child<VigilReady> | undefined;
  let bare: Child<BareReady> | undefined;
  try {
    vigil = await startChild<VigilReady>('serve-vigil.ts', { ...process.env, DATABASE_URL: db.url, DATA_DIR: dataDir }, undefined, prof);
    const v = vigil.ready;
    let t = Date.now();
    const ids = await seed(v);
    console.error(`seeded ${MONITORS} monitors through the API in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    const id = ids[Math.floor(MONITORS / 2)];
    const auth = { authorization: `Bearer ${v.apiKey}` };
    const json = { ...auth, accept: 'application/json' };
    const proto = { ...auth, accept: PROTOBUF };
    const single = await get(`${v.url}/api/v1/monitors/${id}`, json);
    const list = await get(`${v.url}/api/v1/monitors`, json);
    const count = (JSON.parse(list.body.toString('utf8')) as { data: unknown[] }).data.length;
    if (count !== MONITORS) throw new Error(`the list has ${count} monitors, expected ${MONITORS}`);
    const singlePb = await get(`${v.url}/api/v1/monitors/${id}`, proto);
    const listPb = await get(`${v.url}/api/v1/monitors`, proto);
    for (const r of [singlePb, listPb]) if (!r.type.startsWith(PROTOBUF)) throw new Error(`protobuf request answered with ${r.type}`);
    console.error(`payloads: single ${single.body.length} B JSON / ${singlePb.body.length} B protobuf; ` +
      `list ${list.body.length} B JSON / ${listPb.body.length} B protobuf`);

    bare = await startChild<BareReady>('serve-bare.ts', process.env,
      { type: 'payloads', single: single.body.toString('utf8'), list: list.body.toString('utf8'), contentType: single.type } satisfies BarePayloads);
    const b = bare.ready;

    const cases: { name: string; url: string; headers: Record<string, string>; baseline?: string }[] = [
      { name: 'bare Express: GET /monitors/{id}', url: `${b.url}/api/v1/monitors/${id}`, headers: json },
      { name: 'Vigil: GET /monitors/{id} JSON', url: `${v.url}/api/v1/monitors/${id}`, headers: json, baseline: 'single' },
      { name: 'Vigil: GET /monitors/{id} protobuf', url: `${v.url}/api/v1/monitors/${id}`, headers: proto, baseline: 'single' },
      { name: 'bare Express: GET /monitors (1,000)', url: `${b.url}/api/v1/monitors`, headers: json },
      { name: 'Vigil: GET /monitors JSON (1,000)', url: `${v.url}/api/v1/monitors`, headers: json, baseline: 'list' },
      { name: 'Vigil: GET /monitors protobuf (1,000)', url: `${v.url}/api/v1/monitors`, headers: proto, baseline: 'list' },
    ];
    const only = process.env.BENCH_ONLY;
    if (only) cases.splice(0, cases.length, ...cases.filter((c) => (c.url.endsWith('/monitors') ? 'list' : 'single') === only));
    // Each case runs in BENCH_ROUNDS parts (default 4) of the duration, the cases of a group in the order
    // bare, JSON, protobuf, then back (protobuf, JSON, bare), and again: the shared machine's speed drifts
    // by tens of percent over a run, and mirrored order makes that drift weigh on every case alike.
    const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS || 4));
    const part = Number(process.env.BENCH_DURATION || 10) / rounds;
    const warmup = Number(process.env.BENCH_WARMUP ?? 2);
    const runs = new Map<string, Measured[]>();
    // Vigil's own CPU time per request: steadier than requests/s on a shared machine.
    const cpu = new Map<string, { ms: number; requests: number }>();
    for (const group of ['single', 'list']) {
      const mine = cases.filter((c) => (c.url.endsWith('/monitors') ? 'list' : 'single') === group);
      const order = Array.from({ length: rounds }, (_, r) => (r % 2 === 0 ? mine : [...mine].reverse())).flat();
      for (const c of order) {
        if (warmup > 0 && !runs.has(c.name)) await autocannon({ url: c.url, headers: c.headers, connections: 10, duration: warmup });
        t = Date.now();
        const cpuBefore = c.baseline ? cpuMs(vigil.proc.pid!) : 0;
        const m = await measure(c.url, c.headers, part);
        if (c.baseline) {
          const used = cpu.get(c.name) ?? { ms: 0, requests: 0 };
          cpu.set(c.name, { ms: used.ms + cpuMs(vigil.proc.pid!) - cpuBefore, requests: used.requests + m.total });
        }
        console.error(`${c.name}: ${Math.round(m.rps)} req/s, p99 ${m.p99} ms (${((Date.now() - t) / 1000).toFixed(0)} s)`);
        runs.set(c.name, [...(runs.get(c.name) ?? []), m]);
      }
    }
    const base: Record<string, Measured> = {};
    const rows: Row[] = [];
    for (const c of cases) {
      const m = combine(runs.get(c.name)!);
      if (!c.baseline) base[c.url.endsWith('/monitors') ? 'list' : 'single'] = m;
      rows.push({ name: c.name, m, baseline: c.baseline ? base[c.baseline] : null });
    }

    console.log(`\n${table(rows)}\n\n${machine(db.label)}\n`);
    for (const [name, { ms, requests }] of cpu) if (requests) console.log(`${name}: ${(ms * 1000 / requests).toFixed(0)} µs of Vigil CPU per request`);
    const bad = rows.filter((r) => r.m.bad > 0);
    for (const r of bad) console.log(`WARNING: ${r.name}: ${r.m.bad} of ${r.m.total} responses were not 2xx (or failed)`);
    if (!bad.length) console.log('All responses were 2xx.');
    const find = (name: string) => rows.find((r) => r.name.includes(name));
    const sj = find('{id} JSON');
    if (sj) {
      const ratio = sj.m.rps / base.single.rps;
      console.log(`Target single read ≥ 0.50× bare: ${ratio.toFixed(2)}× — ${ratio >= 0.5 ? 'met' : 'MISSED'}`);
    }
    for (const what of ['single', 'list'] as const) {
      const [j, p] = what === 'single' ? [sj, find('{id} protobuf')] : [find('monitors JSON'), find('monitors protobuf')];
      if (!j || !p) continue;
      const ratio = p.m.rps / j.m.rps;
      // Rounds pair up (JSON and protobuf ran back to back): their ratios say how sure the figure is.
      const { low, high } = interval(runs.get(p.name)!.map((m, i) => m.rps / runs.get(j.name)![i].rps));
      const verdict = ratio >= 1 ? 'met' : high >= 1 ? 'parity within the noise of this machine' : 'MISSED';
      console.log(`Target protobuf ≥ JSON (${what}): ${ratio.toFixed(2)}× (95% interval of the ${rounds} paired rounds ${low.toFixed(2)}–${high.toFixed(2)}) — ${verdict}`);
    }
  } finally {
    await bare?.stop();
    await vigil?.stop();
    await db.drop().catch((e) => console.error(`dropping the bench database: ${(e as Error).message}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
