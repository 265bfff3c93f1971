/**
 * Child process of `npm run bench:errors` (bench/errors.ts): one Vigil server
 * (`startServer`, as `npm start` runs it) on its own event loop, with an
 * organisation to create the error projects in.
 *
 * Environment (set by the parent): DATABASE_URL, MASTER_KEY, DATA_DIR,
 * WORKER (true: the grouper runs in this process, as in a single-process
 * deployment; false: no grouper, the parent starts `npm run worker`),
 * RATE_LIMIT_STORE (the default with a database is postgres), and the
 * ingestion limits ERRORS_PER_PROJECT_PER_MINUTE /
 * ERRORS_PER_ORGANIZATION_PER_HOUR raised out of the way. Sends `{ type:
 * 'ready', url, pid, apiKey, workspaceId }`; on `{ type: 'stop' }` (or when
 * the parent goes away) it closes the server and exits. With
 * BENCH_SQL_TIMING=1 every statement is timed; `{ type: 'sql' }` answers the
 * top statements since the last ask. `{ type: 'profile', dir }` starts the V8
 * CPU profiler; `{ type: 'profile', stop: true }` writes what it recorded
 * since to `dir` and answers `{ type: 'profile', file }` (a profile of the
 * measured load alone, without start-up).
 */
import { profileOnMessage } from './lib';
import pg from 'pg';
import { loadConfig } from '../src/config';
import { createOrganization } from '../src/domain/organizations';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { slowestSql, timeSql } from './sqlTiming';

/**
 * `pool.query` (the postgres rate-limit store's way) hands pg's Client.query a
 * callback, which bench/sqlTiming.ts does not time: those are timed here.
 */
let poolTimes = new Map<string, { n: number; ms: number }>();
function timePoolQueries(): void {
  const original = pg.Pool.prototype.query as (...a: unknown[]) => unknown;
  (pg.Pool.prototype as { query: unknown }).query = function (this: pg.Pool, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text ?? '?';
    const key = `(pool.query) ${text.replace(/\s+/g, ' ').trim().slice(0, 90)}`;
    const t = performance.now();
    const done = () => { const s = poolTimes.get(key) ?? { n: 0, ms: 0 }; s.n++; s.ms += performance.now() - t; poolTimes.set(key, s); };
    const out = original.apply(this, args);
    if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(done, done);
    return out;
  };
}

export interface ErrorsVigilReady { type: 'ready'; url: string; pid: number; apiKey: string; workspaceId: string }

async function main(): Promise<void> {
  if (process.env.BENCH_SQL_TIMING === '1') { timeSql(); timePoolQueries(); }
  // loadConfig reads some values from process.env itself, so they are set there.
  Object.assign(process.env, { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000' });
  const server = await startServer(loadConfig(process.env), createLogger('warn'));
  const org = await createOrganization(server.db, { name: 'Bench errors', ownerEmail: `bench-errors-${process.pid}@example.test`, plan: 'enterprise' });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
  };
  const profile = profileOnMessage('errors-vigil');
  process.on('message', (m: { type?: string; dir?: string; stop?: boolean }) => {
    if (m?.type === 'stop') stop();
    if (m?.type === 'sql') {
      const pool = [...poolTimes].map(([text, v]) => ({ text, ...v }));
      poolTimes = new Map();
      process.send!({ type: 'sql', top: [...slowestSql(25, true), ...pool].sort((a, b) => b.ms - a.ms).slice(0, 25) });
    }
    if (profile(m)) return;
  });
  process.on('disconnect', stop);
  process.send!({ type: 'ready', url: server.url, pid: process.pid, apiKey: org.apiKey, workspaceId: org.workspaceId } satisfies ErrorsVigilReady);
}

main().catch((e) => { console.error('errors-vigil:', e); process.exit(1); });
