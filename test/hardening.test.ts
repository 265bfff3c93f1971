import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPrivateAddress } from '../src/net/policy';
import { safeMatch } from '../src/engine/safeRegex';
import { nextOccurrence } from '../src/alerting/maintenance';
import { kinds } from '../src/engine/kinds';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// Regressions found in review: address-policy bypasses, tenant input that
// could stall the process or 500, and an incident orphaned by pausing.

describe('address policy', () => {
  test.each(['127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '169.254.169.254', '10.1.2.3', 'fd00::1', '100.64.0.1',
    'fd00:ec2::254', '0.0.0.0', '::', '::127.0.0.1', '64:ff9b::a00:1', '64:ff9b:1::a00:1'])('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });
  test.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:5db8:d822'])('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  test('an http check to an IPv4-mapped loopback URL is refused when private addresses are off', async () => {
    const target = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (target.address() as AddressInfo).port;
      const r = await kinds.http.check({ url: `http://[::ffff:127.0.0.1]:${port}/`, method: 'GET', headers: {}, body: null, timeoutSeconds: 5, followRedirects: true, assertions: [] },
        { monitorId: 'm', intervalSeconds: 60, now: new Date(), signal: AbortSignal.timeout(5000), net: { allowPrivate: false, extraCa: [] } });
      expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed' });
    } finally {
      target.close();
    }
  });
});

test('a catastrophically backtracking pattern fails fast instead of stalling', () => {
  const started = Date.now();
  expect(safeMatch('^(a+)+$', `${'a'.repeat(40)}b`)).toBe(false);
  expect(Date.now() - started).toBeLessThan(1000);
  expect(safeMatch('^ok$', 'ok')).toBe(true);
  expect(safeMatch('(', 'x')).toBe(false);
});

test('a recurrence rule with a huge COUNT is not expanded (first occurrence only) and answers at once', () => {
  const started = Date.now();
  const w = { startsAt: new Date('1000-01-01T00:00:00Z'), endsAt: new Date('1000-01-01T01:00:00Z'), timezone: 'UTC', recurrenceRule: 'FREQ=DAILY;COUNT=1000000' };
  expect(nextOccurrence(w, new Date())).toBeNull();
  expect(Date.now() - started).toBeLessThan(1000);
});

describe('through the API', () => {
  let server: TestServer;
  let api: ApiClient;
  let org: { organizationId: string; workspaceId: string; apiKey: string };
  let target: http.Server;
  let status = 500;
  beforeAll(async () => {
    target = http.createServer((_req, res) => { res.statusCode = status; res.end('x'); });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
    server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
    org = await server.org({ plan: 'enterprise' });
    api = server.api(org.apiKey);
  });
  afterAll(async () => { await server.close(); target.close(); });

  test('an interval beyond 30 days (even beyond a 32-bit integer) is clamped to 30 days, never a 500', async () => {
    for (const intervalSeconds of [3_000_000_000, 99_999_999_999, 1e300]) {
      const r = await api.post('/monitors', { name: 'x', kind: 'http', workspaceId: org.workspaceId, intervalSeconds, config: JSON.stringify({ url: 'https://x.example.test' }) });
      expect(r.status).toBe(201);
      expect(r.body.data.intervalSeconds).toBe(2_592_000);
      await api.delete(`/monitors/${r.body.data.id}`);
    }
  });

  test('concurrent workspaces of one name all get created, with distinct slugs', async () => {
    const all = await Promise.all(Array.from({ length: 6 }, () => api.post('/workspaces', { name: 'Clients' })));
    expect(all.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(all.map((r) => r.body.data.slug)).size).toBe(6);
  });

  test('a monitor paused while down, unpaused and back up, resolves its incident', async () => {
    const port = (target.address() as AddressInfo).port;
    const id = ok('createMonitor', await api.post('/monitors', { name: 'pausy', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: `http://127.0.0.1:${port}/` }) }), 201).id;
    const down = await until('down', async () => { const m = (await api.get(`/monitors/${id}`)).body.data; return m.status === 'down' ? m : null; });
    ok('updateMonitor', await api.patch(`/monitors/${id}`, { paused: true }));
    status = 200;
    ok('updateMonitor', await api.patch(`/monitors/${id}`, { paused: false }));
    const up = await until('up again', async () => { const m = (await api.get(`/monitors/${id}`)).body.data; return m.status === 'up' ? m : null; });
    expect(up.openIncidentId).toBeNull();
    expect(ok('getIncident', await api.get(`/incidents/${down.openIncidentId}`)).status).toBe('resolved');
  });

  test('limit below 1 on /incidents is clamped, not refused', async () => {
    expect((await api.get('/incidents?limit=0')).status).toBe(200);
    expect((await api.get('/incidents?limit=-5')).status).toBe(200);
  });
});
