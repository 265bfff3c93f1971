import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT, spawnTracked, tempDir } from './support/child';
import { alive, descendants } from './support/procs';

// What a process supervisor or a container runtime does: signal only the PID
// it started (`npm start`), not the process group. The whole service stops —
// server, worker, embedded PostgreSQL — with nothing left listening or running.

const listening = (port: number) => new Promise<boolean>((resolve) => {
  const s = net.connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve(true); });
  s.once('error', () => resolve(false));
});

let dataDir: string;
beforeAll(() => { dataDir = tempDir('vigil-signals-'); });
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test.each(['SIGTERM', 'SIGINT'] as const)('%s to the PID of `npm start` stops the server, the worker and the embedded PostgreSQL', async (signal) => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  // Its own process group (spawnTracked), so that only the PID is signalled, as a supervisor does.
  const npm = spawnTracked('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
