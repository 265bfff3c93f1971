/**
 * Child process of `npm run bench:api` (bench/api.ts): runs Vigil on its own
 * event loop so the load generator does not compete with it for one thread.
 *
 * Environment (set by the parent): DATABASE_URL (empty = embedded PostgreSQL
 * under DATA_DIR) and DATA_DIR. Starts the server with rate limits raised out
 * of the way (the limiter still runs), creates an enterprise organisation and
 * sends `{ type: 'ready', url, apiKey, workspaceId }` over IPC. On `{ type:
 * 'stop' }` it closes the server and exits (so `--cpu-prof` gets written).
 */
import { loadConfig } from '../src/config';
import { createOrganization } from '../src/domain/organizations';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';

export interface VigilReady { type: 'ready'; url: string; apiKey: string; workspaceId: string }

async function main(): Promise<void> {
  // The API alone: no check worker, so the 1,000 seeded monitors are not being
  // checked while their reads are measured.
  const server = await startServer(loadConfig({
    ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_STORE: 'memory',
    RATE_LIMIT_READ: '100000000', RATE_LIMIT_WRITE: '100000000', WORKER: 'false',
  }), createLogger('silent'));
  const org = await createOrganization(server.db, { name: 'Bench Org', ownerEmail: `bench-${process.pid}@example.test`, plan: 'enterprise' });
  const stop = () => server.close().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
  process.on('message', (m: { type?: string }) => { if (m?.type === 'stop') void stop(); });
  process.on('disconnect', () => void stop()); // the parent died: do not linger
  process.send!({ type: 'ready', url: server.url, apiKey: org.apiKey, workspaceId: org.workspaceId } satisfies VigilReady);
}

main().catch((e) => { console.error('serve-vigil:', e); process.exit(1); });
