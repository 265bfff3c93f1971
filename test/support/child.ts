import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The project root. */
export const ROOT = path.resolve(__dirname, '../..');

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
 * is the server's) and resolves once it prints its address.
 */
export function startChild(env: Record<string, string>, script = 'src/main.ts'): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
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
