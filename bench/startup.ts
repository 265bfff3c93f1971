/**
 * Start-up benchmark — `npm run bench:startup`.
 *
 * Starts Vigil BENCH_RUNS (3) times each way — compiled (`node
 * dist/src/main.js`, what `npm start` runs) and through tsx (`node --import
 * tsx src/main.ts`, as before the build step) — on one fresh database of the
 * local PostgreSQL (already migrated after the first start, as on a restart),
 * and prints the median time from spawn to the "listening" line and the RSS
 * after 10 s idle (worker running, nothing due). Run `npm run build` first.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDatabase, machine } from './lib';

const ROOT = path.resolve(__dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS || 3);
const IDLE_MS = 10_000;

function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function once(args: string[], env: NodeJS.ProcessEnv): Promise<{ startMs: number; rss: number }> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const startMs = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (/listening at /.test(out)) resolve(Number(process.hrtime.bigint() - started) / 1e6);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const rss = rssOf(child.pid!);
  child.removeAllListeners('exit');
  await new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM'); });
  return { startMs, rss };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, 'dist/src/main.js'))) throw new Error('run npm run build first');
  const db = await benchDatabase();
  if (!db.url) throw new Error('bench:startup needs the local PostgreSQL (or BENCH_DATABASE_URL)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-start-'));
  const env = { ...process.env, DATABASE_URL: db.url, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const modes: [string, string[]][] = [['compiled (npm start)', ['dist/src/main.js']], ['tsx (before)', ['--import', 'tsx', 'src/main.ts']]];
  try {
    await once(modes[0][1], env); // migrates the fresh database: not measured
    const rows: string[] = ['| Start | Time to listening (median) | RSS after 10 s idle (median) |', '|---|---:|---:|'];
    for (const [name, args] of modes) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await once(args, env));
      rows.push(`| ${name} | ${Math.round(median(runs.map((r) => r.startMs)))} ms | ${(median(runs.map((r) => r.rss)) / 2 ** 20).toFixed(0)} MiB |`);
    }
    console.log(rows.join('\n'));
    console.log(`\n${machine(db.label)}; ${RUNS} runs each`);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await db.drop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
