/**
 * Child process of `npm run bench:status` (bench/status.ts): Vigil serving
 * the API and the public status pages, without a worker (a separate child
 * writes check results). Every statement this process sends to PostgreSQL is
 * counted (pg's Client.query, patched before the server starts), and the
 * page cache's loads, so the parent can tell the database work per request.
 *
 * IPC: sends `{ type: 'ready', url, apiKey, workspaceId }`; answers
 * `{ type: 'stats' }` with `{ type: 'stats', queries, loads }`; exits on
 * `{ type: 'stop' }`.
 */
import pg from 'pg';
import { loadConfig } from '../src/config';
import { createOrganization } from '../src/domain/organizations';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';

export interface StatusVigilReady { type: 'ready'; url: string; apiKey: string; workspaceId: string }
export interface StatusVigilStats { type: 'stats'; queries: number; loads: number }

let queries = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  queries++;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

async function main(): Promise<void> {
  const server = await startServer(loadConfig({
    ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_STORE: 'memory',
    RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000', WORKER: 'false',
  }), createLogger('silent'));
  const org = await createOrganization(server.db, { name: 'Bench status', ownerEmail: `bench-status-${process.pid}@example.test`, plan: 'enterprise' });
  const stop = () => server.close().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'stop') void stop();
    if (m?.type === 'stats') process.send!({ type: 'stats', queries, loads: server.statusPageLoads() } satisfies StatusVigilStats);
  });
  process.on('disconnect', () => void stop());
  process.send!({ type: 'ready', url: server.url, apiKey: org.apiKey, workspaceId: org.workspaceId } satisfies StatusVigilReady);
}

main().catch((e) => { console.error('status-vigil:', e); process.exit(1); });
