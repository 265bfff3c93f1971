/**
 * GET /api/v1/stream and the limits around it: opening a stream spends one
 * read however many events it carries; open streams are capped per
 * organisation (429 too_many_streams); shutdown ends open streams at once
 * instead of holding the drain for its whole grace period.
 */
import { startTestServer, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { openSse, type SseStream } from './support/sse';

let server: TestServer;
const opened: SseStream[] = [];

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '6', RATE_LIMIT_WRITE: '100', STREAM_MAX_PER_ORGANIZATION: '2', STREAM_HEARTBEAT_SECONDS: '1', SHUTDOWN_TIMEOUT: '25' });
}, 60_000);
afterAll(async () => {
  for (const s of opened) s.close();
  await server?.close().catch(() => undefined);
});

const open = async (key: string) => {
  const s = await openSse(`${server.url}/api/v1/stream`, { authorization: `Bearer ${key}` });
  opened.push(s);
  return s;
};

test('a stream counts once against the read limit, whatever it carries', async () => {
  const org = await server.org({ plan: 'enterprise' });
  const api = server.api(org.apiKey);
  const s = await open(org.apiKey);
  expect(s.status).toBe(200);
  // Twelve events and a few keep-alives on the open stream: none is a read.
  for (let i = 0; i < 6; i++) {
    const id = ok('createMonitor', await api.post('/monitors', { name: `m${i}`, kind: 'heartbeat', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ graceSeconds: 600 }) }), 201).id;
    ok('updateMonitor', await api.patch(`/monitors/${id}`, { name: `m${i} renamed` }));
  }
  await s.waitFor(() => s.messages.filter((m) => m.event === 'monitor.changed').length >= 12);
  await new Promise((r) => setTimeout(r, 2200));
  expect(s.comments.length).toBeGreaterThanOrEqual(2);
  // Read limit 6: the stream took one, five reads remain, the sixth is refused.
  for (let i = 0; i < 5; i++) expect((await api.get('/summary')).status).toBe(200);
  const refused = await api.get('/summary');
  expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
}, 30_000);

test('open streams are capped per organisation: 429 too_many_streams, a place frees when one closes', async () => {
  const org = await server.org({ plan: 'enterprise' });
  const other = await server.org({ plan: 'enterprise' });
  const a = await open(org.apiKey);
  await open(org.apiKey);
  const third = await fetch(`${server.url}/api/v1/stream`, { headers: { authorization: `Bearer ${org.apiKey}` } });
  const body = await third.json() as { code: string; vars: Record<string, string> };
  expect([third.status, body.code, body.vars.limit, third.headers.get('retry-after')]).toEqual([429, 'too_many_streams', '2', '30']);
  // Another organisation has places of its own.
  expect((await open(other.apiKey)).status).toBe(200);
  a.close();
  await new Promise((r) => setTimeout(r, 300));
  expect((await open(org.apiKey)).status).toBe(200);
}, 30_000);

test('Connect does not serve the stream: a clear refusal, never a 5xx or a hang', async () => {
  const org = await server.org({ plan: 'enterprise' });
  const res = await fetch(`${server.url}/rpc/vigil.v1.StreamService/StreamEvents`, {
    method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: '{}',
  });
  // A unary call to a server-streaming method: Connect's own 415 (unsupported content type), before any handler.
  expect(res.status).toBe(415);
});

test('shutdown ends open streams at once (no wait for SHUTDOWN_TIMEOUT)', async () => {
  const org = await server.org({ plan: 'enterprise' });
  const s = await open(org.apiKey);
  expect(s.status).toBe(200);
  const t = Date.now();
  await server.close();
  await s.ended;
  expect(Date.now() - t).toBeLessThan(10_000);
}, 40_000);
