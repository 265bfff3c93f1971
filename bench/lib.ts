/**
 * Helpers of the API benchmark (bench/api.ts): where the database comes from,
 * starting the server children, one autocannon run, and the markdown table.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { Session } from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

/** The PostgreSQL the benchmark uses: a URL (dropped at the end when we made it), or '' for embedded. */
export interface BenchDatabase { url: string; label: string; drop(): Promise<void> }

const LOCAL_ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';

async function adminQuery(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: LOCAL_ADMIN, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query(sql);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** BENCH_DATABASE_URL, else a fresh database on the local server, else embedded (''). */
export async function benchDatabase(): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) return { url: given, label: 'BENCH_DATABASE_URL', drop: async () => undefined };
  const name = `vigil_bench_${process.pid}`;
  try {
    await adminQuery(`create database ${name}`);
  } catch (e) {
    console.error(`local PostgreSQL not usable (${(e as Error).message}); using the embedded server`);
    return { url: '', label: 'embedded PostgreSQL', drop: async () => undefined };
  }
  const u = new URL(LOCAL_ADMIN);
  u.pathname = `/${name}`;
  return { url: u.toString(), label: `local PostgreSQL (${name})`, drop: () => adminQuery(`drop database if exists ${name} with (force)`) };
}

/** A forked TypeScript child (`node --import tsx`) and its first IPC message. */
export interface Child<T> { proc: ChildProcess; ready: T; stop(): Promise<void> }

export async function startChild<T>(file: string, env: NodeJS.ProcessEnv, first?: unknown, execArgv: string[] = []): Promise<Child<T>> {
  // BENCH_V8_FLAGS: V8 flags for the child (e.g. npm start's --heap-growing-percent, which NODE_OPTIONS refuses).
  const v8Flags = (process.env.BENCH_V8_FLAGS ?? '').split(' ').filter(Boolean);
  const proc = fork(path.join(__dirname, file), [], { env, execArgv: [...v8Flags, ...execArgv, '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<T>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as T));
    proc.once('exit', (code) => reject(new Error(`${file} exited with code ${code} before it was ready`)));
    if (first !== undefined) proc.send(first as object);
  });
  proc.removeAllListeners('exit');
  const stop = () => new Promise<void>((resolve) => {
    if (proc.exitCode !== null) return resolve();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    proc.once('exit', () => { clearTimeout(timer); resolve(); });
    proc.send({ type: 'stop' });
  });
  return { proc, ready, stop };
}

/** What one load run measured. */
export interface Measured { rps: number; p50: number; p99: number; bytes: number; total: number; bad: number }

/** Loads one URL with autocannon (10 connections, pipelining 1) for `duration` s (default BENCH_DURATION, else 10). */
export async function measure(url: string, headers: Record<string, string>, duration = Number(process.env.BENCH_DURATION || 10)): Promise<Measured> {
  const r = await autocannon({ url, headers, connections: 10, pipelining: 1, duration });
  return {
    rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, bytes: r.throughput.average,
    total: r.requests.total, bad: r.non2xx + r.errors + r.timeouts,
  };
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc; 0 elsewhere). */
export function cpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in clock ticks of 10 ms
  } catch {
    return 0;
  }
}

/** Several runs of one case as one: mean rates and medians, the worst p99, summed counts. */
export function combine(runs: Measured[]): Measured {
  const mean = (f: (m: Measured) => number) => runs.reduce((a, m) => a + f(m), 0) / runs.length;
  return {
    rps: mean((m) => m.rps), p50: mean((m) => m.p50), p99: Math.max(...runs.map((m) => m.p99)), bytes: mean((m) => m.bytes),
    total: runs.reduce((a, m) => a + m.total, 0), bad: runs.reduce((a, m) => a + m.bad, 0),
  };
}

/** One row of the results table. */
export interface Row { name: string; m: Measured; baseline: Measured | null }

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** The markdown table (README-ready) of all cases. */
export function table(rows: Row[]): string {
  const out = ['| Case | Requests/s | p50 (ms) | p99 (ms) | Throughput (MB/s) | vs bare |', '|---|---:|---:|---:|---:|---:|'];
  for (const { name, m, baseline } of rows) {
    const r = baseline ? m.rps / baseline.rps : 1;
    const ratio = baseline ? `${r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}×` : '1.00× (baseline)';
    out.push(`| ${name} | ${fmt(m.rps)} | ${fmt(m.p50)} | ${fmt(m.p99)} | ${fmt(m.bytes / 1e6, 1)} | ${ratio} |`);
  }
  return out.join('\n');
}

/** One line describing the machine and the run. */
export function machine(db: string): string {
  const cpus = os.cpus();
  return `Node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${os.platform()} ${os.release()}, ` +
    `${Math.round(os.totalmem() / 2 ** 30)} GiB RAM; database: ${db}; autocannon 10 connections, ${process.env.BENCH_DURATION || 10} s per case`;
}

/** Calls Vigil's API with the benchmark's key; the answer's `data` (throws on a non-2xx). */
export async function api<T>(v: { url: string; apiKey: string }, method: string, p: string, body?: unknown): Promise<T> {
  const res = await fetch(`${v.url}/api/v1${p}`, { method, headers: { authorization: `Bearer ${v.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json() as { data: T };
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** Sends `msg` to a child and resolves with its first answer of the same `type`. */
export function ask<T>(c: Child<unknown>, msg: { type: string } & Record<string, unknown>): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type?: string }) => { if (m?.type === msg.type) { c.proc.off('message', on); resolve(m as T); } };
    c.proc.on('message', on);
    c.proc.send(msg);
  });
}

/** kB of a /proc/<pid>/status field (VmRSS, VmHWM); 0 once the process is gone. */
export function memKb(pid: number, field: string): number {
  try {
    return Number(new RegExp(`^${field}:\\s*(\\d+)`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * The profiling half of a benchmarked child's message handler: `{type:
 * 'profile', dir}` starts a V8 CPU profile (0.5 ms sampling), `{type:
 * 'profile', stop: true}` writes it into that folder as
 * `<name>-<pid>-<time>.cpuprofile` and answers `{type: 'profile', file}`.
 * Returns whether the message was one of these.
 */
export function profileOnMessage(name: string): (m: { type?: string; dir?: string; stop?: boolean }) => boolean {
  let profiler: { session: Session; dir: string } | null = null;
  return (m) => {
    if (m?.type !== 'profile') return false;
    if (!m.stop && m.dir) {
      const session = new Session();
      session.connect();
      profiler = { session, dir: m.dir };
      session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')));
    }
    if (m.stop && profiler) {
      const { session, dir } = profiler;
      profiler = null;
      session.post('Profiler.stop', (err, r) => {
        const file = path.join(dir, `${name}-${process.pid}-${Date.now()}.cpuprofile`);
        if (!err) { fs.mkdirSync(dir, { recursive: true }); fs.writeFileSync(file, JSON.stringify(r.profile)); }
        session.disconnect();
        process.send!({ type: 'profile', file: err ? null : file });
      });
    }
    return true;
  };
}
