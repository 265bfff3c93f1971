import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// The per-organisation quota (ERRORS_PER_ORGANIZATION_PER_HOUR) holds across
// the organisation's projects: over it 429 with Retry-After and
// X-Sentry-Rate-Limits naming the organisation's quota, nothing stored; another
// organisation is untouched.

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ BASE_URL: '', ERRORS_PER_ORGANIZATION_PER_HOUR: '5', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
});
afterAll(async () => { await server.close(); });

async function projects(n: number): Promise<{ api: ApiClient; list: { id: string; ref: number; publicKey: string }[] }> {
  const org = await server.org({ plan: 'business' });
  const api = server.api(org.apiKey);
  const list = [];
  for (let i = 0; i < n; i++) list.push(ok('createErrorProject', await api.post('/errors/projects', { name: `P${i}`, workspaceId: org.workspaceId }), 201) as { id: string; ref: number; publicKey: string });
  return { api, list };
}

const send = (p: { ref: number; publicKey: string }) =>
  fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: '{}\n{"type":"event"}\n{"message":"quota"}' });

test('over the organisation\'s hourly quota, across its projects: 429 with Retry-After and X-Sentry-Rate-Limits; nothing over it stored', async () => {
  const { list: [a, b] } = await projects(2);
  const statuses: number[] = [];
  let limited: Response | null = null;
  for (let i = 0; i < 8; i++) {
    const r = await send(i % 2 === 0 ? a : b);
    statuses.push(r.status);
    if (r.status === 429) limited = r;
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(limited!.headers.get('x-sentry-rate-limits')).toMatch(/^\d+:error;default;security:organization:quota_exceeded$/);
  const stored = await server.db.selectFrom('error_events').select('project_id').where('project_id', 'in', [a.id, b.id]).execute();
  expect(stored).toHaveLength(5);
  // Another organisation has its own quota.
  const { list: [c] } = await projects(1);
  expect((await send(c)).status).toBe(200);
});
