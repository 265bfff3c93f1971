/**
 * Idle-cost benchmark — `npm run bench:idle`.
 *
 * What a quiet installation costs the machine it runs on, forever: one Vigil
 * server (`startServer` as `npm start` runs it: API, worker, job queue,
 * drains, grouper; bench/pings-vigil.ts) with BENCH_N (100) HTTP monitors at
 * BENCH_INTERVAL (60) s against a local target, and nothing else happening.
 * After a warm-up of BENCH_WARMUP (one interval and 5 s) it measures BENCH_DURATION (60) s:
 * CPU of the Vigil process and of PostgreSQL (the benchmark database's
 * backends and the server's background processes), as a share of one core,
 * and the statements the server sent per second (BENCH_SQL_TIMING=1 lists
 * them). Target (issue 29): under 1% of a core all in.
 *
 * Environment: BENCH_N, BENCH_INTERVAL, BENCH_WARMUP, BENCH_DURATION,
 * BENCH_SQL_TIMING=1. Uses a fresh database on the local PostgreSQL
 * (postgres://postgres@127.0.0.1:5432), dropped at the end.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, ask, cpuMs, startChild, type Child } from './lib';
import { checksDatabase, postgresDelta, postgresSnapshot } from './checks-lib';
import type { PingsVigilReady } from './pings-vigil';
import type { SqlTime } from './sqlTiming';

const N = Number(process.env.BENCH_N || 100);
const INTERVAL = Number(process.env.BENCH_INTERVAL || 60);
const WARMUP = Number(process.env.BENCH_WARMUP ?? INTERVAL + 5);
const DURATION = Number(process.env.BENCH_DURATION || 60);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  let checks = 0;
  const target = http.createServer((_req, res) => { checks++; res.end('ok'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  const db = await checksDatabase('idle');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-idle-'));
  let vigil: Child<PingsVigilReady> | undefined;
  try {
    vigil = await startChild<PingsVigilReady>('pings-vigil.ts', {
      ...process.env, DATABASE_URL: db.url, MASTER_KEY: randomBytes(32).toString('base64'), DATA_DIR: dataDir, WORKER: 'true', CHECKS_ALLOW_PRIVATE: 'true',
    });
    const v = vigil.ready;
    for (let i = 0; i < N; i++) {
      await api(v, 'POST', '/monitors', {
        name: `idle ${i}`, kind: 'http', workspaceId: v.workspaceId, intervalSeconds: INTERVAL, config: JSON.stringify({ url: `${targetUrl}/m/${i}` }),
      });
    }
    console.error(`${N} monitors at ${INTERVAL} s; warm-up ${WARMUP} s, measuring ${DURATION} s (${db.label})`);
    await sleep(WARMUP * 1000);
    if (process.env.BENCH_SQL_TIMING === '1') await ask(vigil, { type: 'sql' });
    const c0 = cpuMs(v.pid);
    const p0 = postgresSnapshot(db.name);
    const k0 = checks;
    const t0 = Date.now();
    await sleep(DURATION * 1000);
    const seconds = (Date.now() - t0) / 1000;
    const vigilCpu = (cpuMs(v.pid) - c0) / 1000;
    const pg = postgresDelta(p0, postgresSnapshot(db.name));
    const checked = checks - k0;
    const pct = (cpuSeconds: number) => ((100 * cpuSeconds) / seconds).toFixed(2);
    let statements = '';
    if (process.env.BENCH_SQL_TIMING === '1') {
      const { top } = await ask<{ top: SqlTime[] }>(vigil, { type: 'sql' });
      const total = top.reduce((a, s) => a + s.n, 0);
      statements = `\nStatements: ${(total / seconds).toFixed(1)}/s (top 25 by time):\n${top.map((s) => `  ${(s.n / seconds).toFixed(2)}/s  ${s.ms.toFixed(0)} ms  ${s.text}`).join('\n')}`;
    }
    console.log(`\n| Monitors | Interval | Checks/s | Vigil (% of a core) | PostgreSQL (% of a core) | All in |\n|---:|---:|---:|---:|---:|---:|\n` +
      `| ${N} | ${INTERVAL} s | ${(checked / seconds).toFixed(2)} | ${pct(vigilCpu)} | ${pct(pg.own)} | ${pct(vigilCpu + pg.own)} |\n`);
    console.log(`Measured over ${seconds.toFixed(0)} s after ${WARMUP} s; PostgreSQL = this database's backends (${pct(pg.backends)}%) + the server's background processes; Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}.${statements}`);
  } finally {
    await vigil?.stop();
    await db.drop().catch((e) => console.error(`dropping the bench database: ${(e as Error).message}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
    target.close();
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
