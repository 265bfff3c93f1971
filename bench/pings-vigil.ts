/**
 * Child process of `npm run bench:pings` (bench/pings.ts): one Vigil server
 * (`startServer`, as `npm start` runs it: API, ping endpoint and, with
 * WORKER=true, the worker that drains the ping buffer) on its own event
 * loop, with an organisation to create the heartbeat monitors in.
 *
 * Environment (set by the parent): DATABASE_URL, MASTER_KEY, DATA_DIR,
 * WORKER. Sends `{ type: 'ready', url, pid, apiKey, workspaceId }`; on
 * `{ type: 'stop' }` (or when the parent goes away) it closes the server and
 * exits. With BENCH_SQL_TIMING=1 every statement is timed; `{ type: 'sql' }`
 * answers the top statements since the last ask.
 */
import { loadConfig } from '../src/config';
import { createOrganization } from '../src/domain/organizations';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { slowestSql, timeSql } from './sqlTiming';

export interface PingsVigilReady { type: 'ready'; url: string; pid: number; apiKey: string; workspaceId: string }

async function main(): Promise<void> {
  if (process.env.BENCH_SQL_TIMING === '1') timeSql();
  Object.assign(process.env, { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_STORE: 'memory', RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000' });
  const server = await startServer(loadConfig(process.env), createLogger('warn'));
  const org = await createOrganization(server.db, { name: 'Bench pings', ownerEmail: `bench-pings-${process.pid}@example.test`, plan: 'enterprise' });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
  };
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'stop') stop();
    if (m?.type === 'sql') process.send!({ type: 'sql', top: slowestSql(25, true) });
  });
  process.on('disconnect', stop);
  process.send!({ type: 'ready', url: server.url, pid: process.pid, apiKey: org.apiKey, workspaceId: org.workspaceId } satisfies PingsVigilReady);
}

main().catch((e) => { console.error('pings-vigil:', e); process.exit(1); });
