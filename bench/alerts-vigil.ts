/**
 * Child process of `npm run bench:alerts` (bench/alerts.ts): one whole Vigil
 * server (`startServer`: API, check worker and alerting queue runner) on its
 * own event loop, as `npm start` runs it.
 *
 * Environment (set by the parent): DATABASE_URL (already migrated and seeded),
 * MASTER_KEY (the key the channels' targets were sealed with), DATA_DIR. It
 * sets PORT 0, HOST 127.0.0.1, LOG_LEVEL warn (delivery and check errors
 * show), WORKER true and rate limits out of the way, then sends `{ type:
 * 'ready', url, pid }` over IPC. On `{ type: 'stop' }` (or when the parent
 * goes away) it closes the server and exits, so `--cpu-prof` gets written.
 * With BENCH_SQL_TIMING=1 every SQL statement is timed (wall time by text);
 * `{ type: 'sql' }` answers the top statements since the last ask and resets.
 */
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { slowestSql, timeSql } from './sqlTiming';

export type { SqlTime } from './sqlTiming';

export interface VigilReady { type: 'ready'; url: string; pid: number }
async function main(): Promise<void> {
  if (process.env.BENCH_SQL_TIMING === '1') timeSql();
  // loadConfig reads some values from process.env itself, so they are set there.
  Object.assign(process.env, {
    PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', WORKER: 'true', RATE_LIMIT_STORE: 'memory',
    RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000',
  });
  const server = await startServer(loadConfig(process.env), createLogger('warn'));
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
  };
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'stop') stop();
    if (m?.type !== 'sql') return;
    process.send!({ type: 'sql', top: slowestSql(20, true) });
  });
  process.on('disconnect', stop); // the parent died: do not linger
  process.send!({ type: 'ready', url: server.url, pid: process.pid } satisfies VigilReady);
}

main().catch((e) => { console.error('alerts-vigil:', e); process.exit(1); });
