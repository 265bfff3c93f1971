/**
 * A heartbeat check judged on a ping that a newer ping replaced is not stored,
 * but it still ends its claim: the monitor is judged again within a second on
 * the new ping, not after the two-minute lease runs out.
 */
import { claimDue } from '../src/engine/claim';
import { writeResults } from '../src/engine/results';
import { ok } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';
import { makeDue, scheduleOf } from './support/monitors';

let server: TestServer;
afterAll(() => server.close());

test('a superseded heartbeat result releases the lease and is judged again soon', async () => {
  server = await startTestServer({ RATE_LIMIT_WRITE: '1000' });
  const org = await server.org({ plan: 'enterprise' });
  const api = server.api(org.apiKey);
  const id = ok('createMonitor', await api.post('/monitors', {
    name: 'job', kind: 'heartbeat', workspaceId: org.workspaceId, intervalSeconds: 5, config: JSON.stringify({ graceSeconds: 3 }),
  }), 201).id;
  const judged = new Date(Date.now() - 10_000);
  await server.db.updateTable('monitors').set({ last_ping_at: judged, last_ping_kind: 'success' }).where('id', '=', id).execute();
  await makeDue(server.db, [id]);
  const [claimed] = (await claimDue(server.db, 10, null)).filter((m) => m.id === id);
  expect(claimed).toBeDefined();
  // A ping arrives while the check runs.
  await server.db.updateTable('monitors').set({ last_ping_at: new Date() }).where('id', '=', id).execute();
  const nextDueAt = new Date(Date.now() + 5000);
  await writeResults(server.db, [{
    monitor: claimed, at: new Date(), nextDueAt, judgedPingAt: judged,
    result: { outcome: 'down', cause: 'heartbeat_missed', message: 'No ping.', responseTimeMs: null },
  }]);
  const schedule = await scheduleOf(server.db, id);
  expect(schedule.lease_until).toBeNull();
  expect(schedule.next_due_at.getTime()).toBeLessThanOrEqual(Date.now() + 1500);
  const row = await server.db.selectFrom('monitors').select(['status']).where('id', '=', id).executeTakeFirstOrThrow();
  expect(row.status).toBe('pending'); // the stale judgement was not stored
  const stored = await server.db.selectFrom('check_results').select('monitor_id').where('monitor_id', '=', id).execute();
  expect(stored).toHaveLength(0);
});
