import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { housekeeping } from '../src/engine/housekeeping';
import { startTestServer, type TestServer } from './support/harness';

// CHECKS_ALLOW_PRIVATE=false keeps checks off loopback and private addresses
// (multi-tenant hosting); housekeeping removes raw results past the plan's
// retention and keeps the roll-ups' own windows.

let server: TestServer;
let target: http.Server;
let targetUrl: string;

beforeAll(async () => {
  target = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', CHECKS_ALLOW_PRIVATE: 'false', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
});
afterAll(async () => {
  await server.close();
  await new Promise((r) => target.close(r));
});

test('with CHECKS_ALLOW_PRIVATE=false a monitor of a loopback address goes down, the address refused', async () => {
  const org = await server.org({ plan: 'enterprise' });
  const api = server.api(org.apiKey);
  const id = (await api.post('/monitors', { name: 'internal', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: targetUrl }) })).body.data.id;
  const end = Date.now() + 15000;
  let m: any;
  do {
    await new Promise((r) => setTimeout(r, 150));
    m = (await api.get(`/monitors/${id}`)).body.data;
  } while (m.status === 'pending' && Date.now() < end);
  expect(m.status).toBe('down');
  expect(m.lastMessage).toMatch(/private address/);
  const inc = (await api.get(`/incidents/${m.openIncidentId}`)).body.data;
  expect(inc.cause).toBe('connection_failed');
});

test('housekeeping drops raw results older than the plan retention, and only those', async () => {
  const org = await server.org({ plan: 'free' }); // 90 days of history
  const api = server.api(org.apiKey);
  const id = (await api.post('/monitors', { name: 'old', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: 'https://example.invalid' }) })).body.data.id;
  await api.patch(`/monitors/${id}`, { enabled: false });
  const now = new Date();
  const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
  for (const at of [daysAgo(200), daysAgo(100), daysAgo(10)]) {
    const month = `check_results_${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
    const from = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    const to = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
    await sql`create table if not exists ${sql.table(month)} partition of check_results for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(server.db);
    await server.db.insertInto('check_results').values({ monitor_id: id, organization_id: org.organizationId, at, outcome: 'up', response_time_ms: 5, cause: null, message: 'ok', detail: null, probe_id: null }).execute();
  }
  await server.db.insertInto('rollup_hourly').values({ monitor_id: id, hour: daysAgo(120), checks: 1, failures: 0, degraded: 0, response_sum_ms: 1, response_count: 1, readings: null }).execute();
  await server.db.insertInto('rollup_daily').values({ monitor_id: id, day: daysAgo(120).toISOString().slice(0, 10), checks: 1, failures: 0, degraded: 0, downtime_seconds: 0, response_sum_ms: 1, response_count: 1 }).execute();
  await server.db.insertInto('rollup_daily').values({ monitor_id: id, day: daysAgo(10).toISOString().slice(0, 10), checks: 1, failures: 0, degraded: 0, downtime_seconds: 0, response_sum_ms: 1, response_count: 1 }).execute();

  await housekeeping(server.db, now);

  // The worker may check the new monitor once before it is disabled: that fresh result is not one of ours.
  const left = await server.db.selectFrom('check_results').select('at').where('monitor_id', '=', id).where('at', '<', daysAgo(1)).execute();
  expect(left.map((r) => Math.round((now.getTime() - r.at.getTime()) / 86_400_000))).toEqual([10]);
  // Likewise the roll-ups of that check (this hour, today) are not ours.
  expect(await server.db.selectFrom('rollup_hourly').select('hour').where('monitor_id', '=', id).where('hour', '<', daysAgo(1)).execute()).toHaveLength(0);
  expect((await server.db.selectFrom('rollup_daily').select('day').where('monitor_id', '=', id).where('day', '<', daysAgo(1).toISOString().slice(0, 10)).execute()).map((r) => r.day))
    .toEqual([daysAgo(10).toISOString().slice(0, 10)]);
  // Partitions for the months ahead exist.
  const parts = await sql<{ n: number }>`select count(*)::int as n from pg_inherits i join pg_class p on p.oid = i.inhparent where p.relname = 'check_results'`.execute(server.db);
  expect(parts.rows[0].n).toBeGreaterThanOrEqual(3);
});
