/**
 * GET /api/v1/stream against a real server with a worker: a monitor whose
 * target stops goes down and opens an incident, and each caller hears
 * exactly what its reads would show it (organisation, permission, workspace
 * confinement); keep-alives; re-authentication; resuming with Last-Event-ID,
 * on the same process and on another one sharing the database; reset.
 */
import http from 'node:http';
import { sql } from 'kysely';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { StreamService, type StreamEventsResponse } from '../gen/proto/vigil/v1/stream_pb';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { startServer, type RunningServer } from '../src/server';
import { newToken, hashToken } from '../src/crypto/tokens';
import { newId } from '../src/crypto/ids';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok, until } from './support/expect';
import { checkNow } from './support/monitors';
import { tempDir } from './support/child';
import { openSse, type SseMessage, type SseStream } from './support/sse';

const MASTER_KEY = randomBytes(32).toString('base64');
let server: TestServer;
let target: http.Server;
let targetUrl: string;
let owner: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let ws2: string;
const tokens: Record<string, string> = {};
const opened: SseStream[] = [];

const stream = async (token: string, extra: Record<string, string> = {}, base = server.url) => {
  const headers: Record<string, string> = token.startsWith('cookie:') ? { cookie: `vigil_session=${token.slice(7)}` } : { authorization: `Bearer ${token}` };
  const s = await openSse(`${base}/api/v1/stream`, { ...headers, ...extra });
  opened.push(s);
  return s;
};
const about = (id: string) => (m: SseMessage) => m.data.monitorId === id || m.data.incidentId === id;

beforeAll(async () => {
  target = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', MASTER_KEY, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', STREAM_HEARTBEAT_SECONDS: '1' });
  org = await server.org({ plan: 'enterprise' });
  owner = server.api(org.apiKey);
  ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: 'Second' }), 201).id;
  tokens.owner = org.apiKey;
  tokens.viewer = (await server.member(org.organizationId, 'viewer')).apiKey;
  const confined = await server.member(org.organizationId, 'member', [org.workspaceId]);
  tokens.confined = confined.apiKey;
  // A session of the confined member, sent as the cookie the web app uses.
  const { token } = newToken('vs');
  const now = new Date();
  await server.db.insertInto('sessions').values({
    id: newId('ses'), token_hash: hashToken(token), user_id: confined.userId, organization_id: org.organizationId,
    created_at: now, last_seen_at: now, expires_at: new Date(now.getTime() + 86_400_000), user_agent: 'test', ip_address: '127.0.0.1',
  }).execute();
  tokens.confinedSession = `cookie:${token}`;
  tokens.scoped = ok('createApiKey', await owner.post('/api-keys', { name: 'monitors only', scopes: ['monitor:read'] }), 201).token;
  tokens.other = (await server.org({ plan: 'enterprise' })).apiKey;
}, 60_000);

afterAll(async () => {
  for (const s of opened) s.close();
  await server?.close();
  await new Promise((r) => target.close(r));
});

test('a monitor going down and its incident reach those who may read them, and nobody else', async () => {
  const s: Record<string, SseStream> = {};
  for (const name of ['owner', 'viewer', 'confined', 'confinedSession', 'scoped', 'other']) {
    s[name] = await stream(tokens[name]);
    expect([name, s[name].status, s[name].headers.get('content-type')]).toEqual([name, 200, 'text/event-stream; charset=utf-8']);
  }
  const create = async (name: string, workspaceId: string) => ok('createMonitor', await owner.post('/monitors', {
    name, kind: 'http', workspaceId, intervalSeconds: 300, confirmations: 1, config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 2 }),
  }), 201).id as string;
  const m1 = await create('in-ws1', org.workspaceId);
  const m2 = await create('in-ws2', ws2);
  expect((await checkNow(server, owner, m1)).status).toBe('up');
  expect((await checkNow(server, owner, m2)).status).toBe('up');
  // The target stops: connections are refused.
  await new Promise((r) => target.close(r));
  const down1 = await checkNow(server, owner, m1);
  const down2 = await checkNow(server, owner, m2);
  expect([down1.status, down2.status]).toEqual(['down', 'down']);
  const inc2 = down2.openIncidentId as string;
  ok('updateIncident', await owner.patch(`/incidents/${inc2}`, { comment: 'looking' }));
  ok('updateIncident', await owner.patch(`/incidents/${inc2}`, { status: 'acknowledged' }));
  ok('updateIncident', await owner.patch(`/incidents/${inc2}`, { status: 'resolved' }));

  const st = await s.owner.waitFor((m) => m.event === 'monitor.status' && m.data.monitorId === m2 && m.data.status === 'down');
  expect(st.data).toEqual({ type: 'monitor.status', id: st.id, at: expect.any(String), workspaceId: ws2, monitorId: m2, status: 'down', since: expect.any(String) });
  expect(st.id).toMatch(/^\d+-\d+$/);
  const opened2 = await s.owner.waitFor((m) => m.event === 'incident.opened' && m.data.incidentId === inc2);
  expect(opened2.data).toEqual({ type: 'incident.opened', id: opened2.id, at: expect.any(String), workspaceId: ws2, incidentId: inc2, monitorId: m2, status: 'open' });
  await s.owner.waitFor((m) => m.event === 'incident.commented' && m.data.incidentId === inc2);
  await s.owner.waitFor((m) => m.event === 'incident.acknowledged' && m.data.incidentId === inc2 && m.data.status === 'acknowledged');
  await s.owner.waitFor((m) => m.event === 'incident.resolved' && m.data.incidentId === inc2);
  await s.owner.waitFor((m) => m.event === 'incident.opened' && m.data.monitorId === m1);
  await s.owner.waitFor((m) => m.event === 'monitor.changed' && m.data.monitorId === m1 && m.data.change === 'created');
  // The others have had time to get what they may (the owner's stream is no faster than theirs).
  await s.confined.waitFor((m) => m.event === 'incident.opened' && m.data.monitorId === m1);
  await s.confinedSession.waitFor((m) => m.event === 'incident.opened' && m.data.monitorId === m1);
  await s.viewer.waitFor((m) => m.event === 'incident.resolved' && m.data.incidentId === inc2);
  await s.scoped.waitFor((m) => m.event === 'monitor.status' && m.data.monitorId === m2 && m.data.status === 'down');
  await new Promise((r) => setTimeout(r, 1500));

  const kinds = (x: SseStream) => x.messages.map((m) => `${m.event} ${m.data.monitorId === m1 ? 'm1' : m.data.monitorId === m2 ? 'm2' : m.data.workspaceId ?? 'org'}`);
  // Everything the owner saw, the viewer saw (it holds both reads), in the same order.
  expect(s.viewer.messages.map((m) => m.id)).toEqual(s.owner.messages.map((m) => m.id));
  for (const name of ['confined', 'confinedSession']) {
    expect([name, s[name].messages.filter((m) => about(m2)(m) || m.data.incidentId === inc2 || m.data.workspaceId === ws2)]).toEqual([name, []]);
    expect(kinds(s[name])).toEqual(expect.arrayContaining(['monitor.changed m1', 'monitor.status m1', 'incident.opened m1']));
  }
  expect(s.scoped.messages.filter((m) => m.event.startsWith('incident.'))).toEqual([]);
  expect(kinds(s.scoped)).toEqual(expect.arrayContaining(['monitor.status m1', 'monitor.status m2', 'monitor.changed m2']));
  // The other organisation hears only of its own checklist (its creation), nothing of this one's.
  expect(s.other.messages.filter((m) => !(m.event === 'setup.changed' && m.data.workspaceId === null))).toEqual([]);
  // Keep-alives flow to every stream, the foreign one too.
  expect(s.other.comments).toContain('keep-alive');
}, 90_000);

test('a keep-alive comment comes every interval, and a revoked key ends its stream at the next one', async () => {
  const key = ok('createApiKey', await owner.post('/api-keys', { name: 'short-lived' }), 201);
  const s = await stream(key.token);
  await until('two keep-alives', async () => s.comments.filter((c) => c === 'keep-alive').length >= 2, 5_000);
  ok('revokeApiKey', await owner.delete('/api-keys', { id: key.id }));
  const t = Date.now();
  await s.ended;
  expect(Date.now() - t).toBeLessThan(5_000);
  // The reconnect is refused like any request with that key.
  expect((await stream(key.token)).status).toBe(401);
});

test('Last-Event-ID resumes without loss, on the same process and on another sharing the database; a stale or unknown cursor is reset', async () => {
  const first = await stream(tokens.owner);
  const id = ok('createMonitor', await owner.post('/monitors', {
    // A heartbeat that waits long for its first ping: nothing but this test changes it.
    name: 'resumed', kind: 'heartbeat', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ graceSeconds: 600 }),
  }), 201).id as string;
  const created = await first.waitFor((m) => m.event === 'monitor.changed' && m.data.monitorId === id);
  first.close();
  // Missed while disconnected:
  ok('updateMonitor', await owner.patch(`/monitors/${id}`, { name: 'resumed, renamed' }));
  ok('updateMonitor', await owner.patch(`/monitors/${id}`, { paused: true }));
  ok('deleteMonitor', await owner.delete(`/monitors/${id}`));
  const expected = ['monitor.changed updated', 'monitor.status paused', 'monitor.changed paused', 'monitor.deleted -'];
  const seen = (s: SseStream) => s.messages.filter(about(id)).map((m) => `${m.event} ${m.data.change ?? m.data.status ?? '-'}`);

  const again = await stream(tokens.owner, { 'last-event-id': created.id! });
  await again.waitFor((m) => m.event === 'monitor.deleted' && m.data.monitorId === id);
  expect(seen(again)).toEqual(expected);

  const dir = tempDir('vigil-stream-second-');
  const second: RunningServer = await startServer(loadConfig({
    DATABASE_URL: server.databaseUrl, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER: 'false', MASTER_KEY, RATE_LIMIT_STORE: 'memory',
  }), createLogger('silent'));
  try {
    // The same cursor on another process: the same events, from the shared log (the query form of the cursor).
    const elsewhere = await openSse(`${second.url}/api/v1/stream?lastEventId=${encodeURIComponent(created.id!)}`, { authorization: `Bearer ${tokens.owner}` });
    opened.push(elsewhere);
    await elsewhere.waitFor((m) => m.event === 'monitor.deleted' && m.data.monitorId === id);
    expect(seen(elsewhere)).toEqual(expected);
    expect(elsewhere.messages.filter(about(id)).map((m) => m.id)).toEqual(again.messages.filter(about(id)).map((m) => m.id));
    // Live: a write through the first process reaches a stream of the second.
    const live = ok('createMonitor', await owner.post('/monitors', {
      name: 'live elsewhere', kind: 'http', workspaceId: ws2, intervalSeconds: 3600, config: JSON.stringify({ url: 'http://127.0.0.1:9/' }),
    }), 201).id as string;
    await elsewhere.waitFor((m) => m.event === 'monitor.changed' && m.data.monitorId === live);
  } finally {
    await second.close();
  }

  // Unknown cursor: reset first, with an id to go on from.
  const garbage = await stream(tokens.owner, { 'last-event-id': 'not-a-cursor' });
  const reset = await garbage.waitFor((m) => m.event === 'reset');
  expect(reset).toEqual({ id: expect.stringMatching(/^\d+-\d+$/), event: 'reset', data: { type: 'reset', id: reset.id, at: expect.any(String), workspaceId: null } });
  expect(garbage.messages[0].event).toBe('reset');
  // A cursor from before what was pruned: reset.
  const [tx, seq] = created.id!.split('-');
  await sql`update stream_pruned set tx = ${tx}::xid8, seq = ${Number(seq) + 1}`.execute(server.db);
  const stale = await stream(tokens.owner, { 'last-event-id': created.id! });
  expect((await stale.waitFor(() => true)).event).toBe('reset');
  await sql`update stream_pruned set tx = '0'::xid8, seq = 0`.execute(server.db);
}, 60_000);

test('over Connect the same events arrive as a server stream, filtered alike, resumable with lastEventId', async () => {
  const transport = (key: string) => createConnectTransport({
    baseUrl: `${server.url}/rpc`, httpVersion: '1.1', useBinaryFormat: true,
    interceptors: [(next) => (req) => { req.header.set('authorization', `Bearer ${key}`); return next(req); }],
  });
  const follow = (key: string, lastEventId?: string) => {
    const abort = new AbortController();
    const got: StreamEventsResponse[] = [];
    const done = (async () => {
      try {
        for await (const m of createClient(StreamService, transport(key)).streamEvents({ lastEventId }, { signal: abort.signal })) got.push(m);
      } catch { /* aborted */ }
    })();
    return { got, stop: async () => { abort.abort(); await done; } };
  };
  const owner1 = follow(tokens.owner);
  const confined = follow(tokens.confined);
  await new Promise((r) => setTimeout(r, 500));
  const inWs2 = ok('createMonitor', await owner.post('/monitors', {
    name: 'connect ws2', kind: 'heartbeat', workspaceId: ws2, intervalSeconds: 3600, config: JSON.stringify({ graceSeconds: 600 }),
  }), 201).id as string;
  await until('the Connect event', async () => owner1.got.find((m) => m.monitorId === inWs2 && m.type === 'monitor.changed'));
  const created = owner1.got.find((m) => m.monitorId === inWs2)!;
  expect(created).toMatchObject({ type: 'monitor.changed', workspaceId: ws2, change: 'created', id: expect.stringMatching(/^\d+-\d+$/) });
  expect(created.at).toBeDefined();
  await owner1.stop();
  ok('updateMonitor', await owner.patch(`/monitors/${inWs2}`, { name: 'connect ws2, renamed' }));
  const resumed = follow(tokens.owner, created.id);
  await until('the missed event', async () => resumed.got.find((m) => m.monitorId === inWs2 && m.change === 'updated'));
  await resumed.stop();
  await new Promise((r) => setTimeout(r, 500));
  await confined.stop();
  expect(confined.got.filter((m) => m.workspaceId === ws2)).toEqual([]);
});
