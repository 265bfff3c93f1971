import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './support/child';

// What a process supervisor or a container runtime does: signal only the PID
// it started (`npm start`), not the process group. The whole service stops —
// server, worker, embedded PostgreSQL — with nothing left listening or running.

/** Every process below `pid` (children, grandchildren, …), read from /proc. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone meanwhile */ }
  }
  const out: number[] = [];
  const walk = (p: number) => { for (const [child, ppid] of parent) if (ppid === p) { out.push(child); walk(child); } };
  walk(pid);
  return out;
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const listening = (port: number) => new Promise<boolean>((resolve) => {
  const s = net.connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve(true); });
  s.once('error', () => resolve(false));
});

let dataDir: string;
beforeAll(() => { dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-signals-')); });
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test.each(['SIGTERM', 'SIGINT'] as const)('%s to the PID of `npm start` stops the server, the worker and the embedded PostgreSQL', async (signal) => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  // detached: its own process group, so that only the PID is signalled, as a supervisor does.
  const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  npm.stdout!.on('data', (d) => { out += d; });
  npm.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${out}`)), 60_000);
    const poll = setInterval(() => {
      const m = /listening at http:\/\/[^:]+:(\d+) /.exec(out);
      if (m) { clearInterval(poll); clearTimeout(timer); resolve(Number(m[1])); }
    }, 50);
    npm.once('exit', (code) => { clearInterval(poll); clearTimeout(timer); reject(new Error(`npm start exited ${code}:\n${out}`)); });
  });
  const tree = descendants(npm.pid!);
  try {
    expect(tree.length).toBeGreaterThan(2); // node, and PostgreSQL's postmaster and its helpers
    expect(await listening(port)).toBe(true);
    const sent = Date.now();
    process.kill(npm.pid!, signal);
    await exited;
    let left = tree.filter(alive);
    while (left.length && Date.now() - sent < 10_000) {
      await new Promise((r) => setTimeout(r, 100));
      left = tree.filter(alive);
    }
    expect({ left, output: left.length ? out : '' }).toEqual({ left: [], output: '' });
    expect(await listening(port)).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  } finally {
    for (const pid of [npm.pid!, ...tree]) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
}, 90_000);
