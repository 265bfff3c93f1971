import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freshDatabase } from './support/harness';
import { ROOT, spawnTracked, tempDir } from './support/child';
import { commandLine, groupMembers } from './support/procs';

// A start that fails once resources are open — here the port is taken —
// prints one line naming the port and what to set, exits non-zero within
// seconds, and leaves nothing running: no worker logging errors against a
// closed pool, no embedded PostgreSQL.

let blocker: net.Server;
let port: number;

beforeAll(async () => {
  blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  port = (blocker.address() as net.AddressInfo).port;
});
afterAll(() => new Promise((r) => blocker.close(r)));

interface Ended { code: number | null; output: string; ms: number; pgid: number }

/** Runs a start to its end (at most `ms`), with the port taken; what it printed, its exit code, how long it took. */
async function failedStart(command: string, args: string[], env: NodeJS.ProcessEnv, ms: number): Promise<Ended> {
  const began = Date.now();
  const child = spawnTracked(command, args, { cwd: ROOT, env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after ${ms} ms:\n${output.slice(0, 4000)}`)), ms);
    child.once('close', (c) => { clearTimeout(timer); resolve(c); });
  });
  return { code, output, ms: Date.now() - began, pgid: child.pid! };
}

/** Waits (briefly) for the process group of a start to be empty; answers what is left. */
async function leftIn(pgid: number): Promise<string[]> {
  const end = Date.now() + 5000;
  let left = groupMembers(pgid);
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    left = groupMembers(pgid);
  }
  return left.map((pid) => `${pid} ${commandLine(pid)}`);
}

const line = () => `Vigil failed to start: port ${port} is already in use (EADDRINUSE); set PORT to a free port`;

function embeddedEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.MASTER_KEY;
  return env;
}

test('embedded database, port taken: one line, exit 1, the embedded PostgreSQL stopped and nothing left running', async () => {
  const dataDir = tempDir('vigil-start-failure-');
  // The first start also initialises the database folder (initdb: slow on a loaded machine).
  const first = await failedStart(process.execPath, ['--import', 'tsx', 'src/main.ts'], embeddedEnv(dataDir), 120_000);
  expect({ code: first.code, output: first.output.trim() }).toEqual({ code: 1, output: line() });
  expect(await leftIn(first.pgid)).toEqual([]);
  expect(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
  expect(fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  expect(fs.existsSync(path.join(dataDir, 'pg.port'))).toBe(false);

  // On an initialised folder it fails within seconds.
  const again = await failedStart(process.execPath, ['--import', 'tsx', 'src/main.ts'], embeddedEnv(dataDir), 60_000);
  expect({ code: again.code, output: again.output.trim() }).toEqual({ code: 1, output: line() });
  expect(again.ms).toBeLessThan(20_000);
  expect(await leftIn(again.pgid)).toEqual([]);
  expect(fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
}, 240_000);

test('DATABASE_URL with the worker on, port taken: one line, exit 1 within seconds, no error flood', async () => {
  const database = await freshDatabase();
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, DATA_DIR: tempDir('vigil-start-failure-'), WORKER: 'true', LOG_LEVEL: 'info', MASTER_KEY: Buffer.alloc(32, 5).toString('base64') };
    const ended = await failedStart(process.execPath, ['--import', 'tsx', 'src/main.ts'], env, 60_000);
    expect({ code: ended.code, output: ended.output.trim() }).toEqual({ code: 1, output: line() });
    // The first start of a database also migrates it (slow on a loaded machine); on a migrated one it fails within seconds.
    const again = await failedStart(process.execPath, ['--import', 'tsx', 'src/main.ts'], env, 60_000);
    expect({ code: again.code, output: again.output.trim() }).toEqual({ code: 1, output: line() });
    expect(again.ms).toBeLessThan(20_000);
    expect(await leftIn(again.pgid)).toEqual([]);
  } finally {
    await database.drop();
  }
}, 180_000);

test('`npm start` with the port taken: exits non-zero with Vigil\'s one line, nothing left running', async () => {
  const database = await freshDatabase();
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, DATA_DIR: tempDir('vigil-start-failure-'), LOG_LEVEL: 'info', MASTER_KEY: Buffer.alloc(32, 5).toString('base64') };
    // npm start builds dist/ first when the sources are newer (tsc: slow on a loaded machine).
    const ended = await failedStart('npm', ['start'], env, 240_000);
    expect(ended.code).not.toBe(0);
    // npm's own lines (the script banner, its error notice) and the build notice aside, Vigil printed one line.
    const vigils = ended.output.split('\n').map((l) => l.trim())
      .filter((l) => l && !l.startsWith('>') && !/^npm (error|ERR!|notice|warn)/.test(l) && !l.startsWith('Building dist/'));
    expect(vigils).toEqual([line()]);
    expect(await leftIn(ended.pgid)).toEqual([]);
  } finally {
    await database.drop();
  }
}, 300_000);
