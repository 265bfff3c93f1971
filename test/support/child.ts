import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { processesWith } from './procs';

/** The project root. */
export const ROOT = path.resolve(__dirname, '../..');

// Cleanup of what tests start, whether they pass, fail or time out: every
// process a test spawns gets a process group of its own (detached) and a
// token in its environment, which its descendants inherit, and is registered
// here; so is every temporary folder. A test's processes are stopped after it
// (afterEach), a file's after the file (afterAll) — SIGTERM to the process,
// then SIGKILL to every process carrying its token (tsx's inner node, npm's
// shell, an embedded PostgreSQL, wherever reparented) once it exited or after
// a grace. The token, not a process or group id, says what is ours: ids wrap
// quickly on a busy machine, and a dead process's id may be someone else's
// by then. Folders go when the next test file starts. Whatever is left is
// killed and removed when the jest process exits, even by forceExit or a
// signal. The registry lives on the real process object: jest hands each
// test file a copy of `process` whose 'exit' never fires, and the exit hooks
// must be installed once per process, not once per file.

const real = vm.runInThisContext('process') as NodeJS.Process;

interface Tracked { child: ChildProcess; token: string; scope: 'test' | 'file' }
interface Registry { children: Set<Tracked>; dirs: Set<string>; inTest: boolean; spawned: number }

const TOKEN = 'VIGIL_TEST_PROCESS';

/** The processes of these tracked ones: each and its descendants, wherever reparented or regrouped. */
function processesOf(tracked: Iterable<Tracked>): number[] {
  return [...tracked].flatMap((t) => processesWith(`${TOKEN}=${t.token}`));
}

/** SIGKILL to every process of these tracked ones. */
function kill(tracked: Iterable<Tracked>): void {
  const list = [...tracked];
  // Its whole group too while the process itself runs (its group id cannot be another's then): that reaches
  // those that rewrote their environment, such as PostgreSQL's backends.
  for (const t of list) {
    if (t.child.pid && t.child.exitCode === null && t.child.signalCode === null) {
      try { real.kill(-t.child.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  }
  for (const pid of processesOf(list)) {
    try { real.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
}

function removeDir(dir: string): void {
  try { fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 }); } catch { /* a last process may still write; nothing more to do */ }
}

/** Synchronous last resort, for 'exit' and signals: SIGKILL every tracked process, remove every folder. */
function killEverythingNow(r: Registry): void {
  kill(r.children);
  r.children.clear();
  for (const dir of r.dirs) removeDir(dir);
  r.dirs.clear();
}

function registry(): Registry {
  const holder = real as unknown as Record<symbol, Registry | undefined>;
  const key = Symbol.for('vigil.test.cleanup');
  const existing = holder[key];
  if (existing) return existing;
  const r: Registry = { children: new Set(), dirs: new Set(), inTest: false, spawned: 0 };
  holder[key] = r;
  real.on('exit', () => killEverythingNow(r));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      killEverythingNow(r);
      // Alone on this signal: die of it as the process would have without us.
      if (real.listenerCount(signal) === 1) {
        real.removeListener(signal, onSignal);
        real.kill(real.pid, signal);
      }
    };
    real.on(signal, onSignal);
  }
  return r;
}

const reg = registry();

/**
 * Stops tracked processes (all, or those a test started): SIGTERM to each,
 * as a supervisor would; once it has exited, or after `graceMs`, SIGKILL to
 * every process of it left (see above).
 */
export async function stopTracked(which: 'test' | 'all' = 'all', graceMs = 10_000): Promise<void> {
  const chosen = [...reg.children].filter((t) => which === 'all' || t.scope === 'test');
  for (const t of chosen) if (t.child.exitCode === null && t.child.signalCode === null) t.child.kill('SIGTERM');
  const end = Date.now() + graceMs;
  while (chosen.some((t) => t.child.exitCode === null && t.child.signalCode === null) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  kill(chosen);
  for (const t of chosen) reg.children.delete(t);
}

if (typeof afterAll === 'function') {
  // A new test file in this process: whatever the files before it left is gone for good. Folders are removed
  // here rather than in afterAll, which runs before the file's own afterAll hooks (that may still use them).
  killEverythingNow(reg);
  beforeEach(() => { reg.inTest = true; });
  afterEach(async () => {
    reg.inTest = false;
    await stopTracked('test');
  }, 60_000);
  afterAll(() => stopTracked('all'), 60_000);
}

/**
 * Spawns a process for a test, in a process group of its own, registered for
 * cleanup (see above): a process started inside a test is stopped after that
 * test, one started in a beforeAll after the file, and any left over when
 * jest exits. Signal it as usual (`child.kill`) to test its own behaviour.
 */
export function spawnTracked(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  const token = `${real.pid}-${++reg.spawned}`;
  // CI also looks for processes carrying its run's marker once the tests are over (.ci/run): kept even in a clean env.
  const marker = process.env.VIGIL_CI_RUN;
  const env = { ...(options.env ?? process.env), [TOKEN]: token, ...(marker ? { VIGIL_CI_RUN: marker } : {}) };
  const child = spawn(command, args, { ...options, env, detached: true });
  const tracked: Tracked = { child, token, scope: reg.inTest ? 'test' : 'file' };
  reg.children.add(tracked);
  // A process that ended with all of its own needs no cleanup; one that left some behind (an orphaned postgres) still does.
  child.once('exit', () => { if (processesOf([tracked]).length === 0) reg.children.delete(tracked); });
  return child;
}

/** What `execTracked` rejects with when the command fails: execFile's error shape. */
export interface ExecFailure extends Error { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/**
 * Runs a command to its end as execFile would — resolves with its output,
 * rejects (code, stdout, stderr) when it exits non-zero or outlives
 * `timeoutMs` — but as a tracked process (see spawnTracked): one a failing
 * test abandons is killed with its whole group.
 */
export function execTracked(command: string, args: readonly string[], options: SpawnOptions & { timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  const { timeoutMs, ...spawnOptions } = options;
  const child = spawnTracked(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => { stdout += d; });
  child.stderr!.on('data', (d) => { stderr += d; });
  let timedOut = false;
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => { timedOut = true; kill([...reg.children].filter((t) => t.child === child)); }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', (e) => { clearTimeout(timer); reject(e); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && !timedOut) return resolve({ stdout, stderr });
      const why = timedOut ? `timed out after ${timeoutMs} ms` : `exited ${code ?? signal}`;
      reject(Object.assign(new Error(`${command} ${args.join(' ')}: ${why}\n${stderr}`), { code, signal, stdout, stderr }) as ExecFailure);
    });
  });
}

/**
 * A new empty folder under `parent` (the system's temporary folder), removed
 * once the test file is over (when the next one starts, or jest exits),
 * whether its tests passed or not.
 */
export function tempDir(prefix: string, parent = os.tmpdir()): string {
  const dir = fs.mkdtempSync(path.join(parent, prefix));
  reg.dirs.add(dir);
  return dir;
}

/** A Vigil process the test started, as an operator would run it. */
export interface ChildServer {
  child: ChildProcess;
  /** The PID of the node process itself (no wrapper in between). */
  pid: number;
  url: string;
  /** The owner key printed on a first start, else null. */
  bootstrapKey: string | null;
  /** Everything it printed so far. */
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `src/main.ts` in its own node process (node --import tsx, so the PID
 * is the server's; tracked, see spawnTracked) and resolves once it prints its
 * address.
 */
export function startChild(env: Record<string, string>, script = 'src/main.ts'): Promise<ChildServer> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no start within 60 s:\n${out}`)); }, 60_000);
    const poll = setInterval(() => {
      const m = /listening at (http:\/\/\S+) /.exec(out);
      if (!m) return;
      clearInterval(poll);
      clearTimeout(timer);
      // The key line follows the address line in the same write.
      setTimeout(() => resolve({
        child,
        pid: child.pid!,
        url: m[1],
        bootstrapKey: /(vk_[A-Za-z0-9_-]{43})/.exec(out)?.[1] ?? null,
        output: () => out,
        stop: () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); return exited; },
      }), 100);
    }, 50);
    child.once('exit', (code) => { clearInterval(poll); clearTimeout(timer); reject(new Error(`exited ${code}:\n${out}`)); });
  });
}

/**
 * Starts `src/worker-main.ts` (node --import tsx; tracked, see spawnTracked)
 * and resolves once it logs "worker started" (LOG_LEVEL info unless `env`
 * says otherwise).
 */
export async function startWorkerChild(env: Record<string, string>): Promise<{ child: ChildProcess; output(): string; exited: Promise<number | null> }> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/worker-main.ts'], {
    cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const end = Date.now() + 60_000;
  while (!/worker started/.test(out)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the worker exited:\n${out}`);
    if (Date.now() > end) throw new Error(`no worker start within 60 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output: () => out, exited };
}

function statusField(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Resident memory of a process now, in bytes. */
export function rss(pid: number): number {
  return statusField(pid, 'VmRSS');
}

/**
 * Measures how far a process's resident memory rises above its level at the
 * start while `fn` runs (Linux: the peak counter is reset first).
 */
export async function peakGrowth(pid: number, fn: () => Promise<unknown>): Promise<number> {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const before = rss(pid);
  await fn();
  return statusField(pid, 'VmHWM') - before;
}
