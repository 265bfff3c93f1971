import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestServer, type TestServer } from './support/harness';
import { spawnTracked } from './support/child';

// Scale-out roles: a server with WORKER=false only serves the API; a separate
// `npm run worker` process on the same database does the checking.

const ROOT = path.resolve(__dirname, '..');
const MASTER_KEY = randomBytes(32).toString('base64');
let server: TestServer;
let target: http.Server;

beforeAll(async () => {
  target = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  server = await startTestServer({ WORKER: 'false', MASTER_KEY });
});
afterAll(async () => {
  await server.close();
  await new Promise((r) => target.close(r));
});

test('an API-only server checks nothing; a worker process on the same database does', async () => {
  const org = await server.org({ plan: 'enterprise' });
  const api = server.api(org.apiKey);
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  const id = (await api.post('/monitors', { name: 'svc', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url }) })).body.data.id;
  await new Promise((r) => setTimeout(r, 800));
  expect((await api.get(`/monitors/${id}`)).body.data.status).toBe('pending');

  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: server.databaseUrl, MASTER_KEY, LOG_LEVEL: 'warn' };
  const worker = spawnTracked(path.join(ROOT, 'node_modules/.bin/tsx'), ['src/worker-main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  worker.stdout!.on('data', (d) => { out += d; });
  worker.stderr!.on('data', (d) => { out += d; });
  try {
    const end = Date.now() + 30000;
    let status = 'pending';
    while (status === 'pending' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await api.get(`/monitors/${id}`)).body.data.status;
    }
    expect({ status, out }).toMatchObject({ status: 'up' });
  } finally {
    const code = await new Promise<number | null>((resolve) => { worker.once('exit', resolve); worker.kill('SIGTERM'); });
    expect(code).toBe(0);
  }
}, 60_000);
