// The background loop every drain, the grouper and the traffic judge share
// (src/jobs/loop.ts): an item that always fails makes the rounds halve down
// to it, and after failing alone it is set aside into `ingest_rejected`,
// whole, while everything behind it is processed. Run on a real buffer table
// through the real drain (src/ingest/buffer.ts).
import { sql } from 'kysely';
import { startDrain, type BufferTable } from '../src/ingest/buffer';
import { SET_ASIDE_AFTER, startLoop } from '../src/jobs/loop';
import { createLogger } from '../src/log';
import { until } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';

let server: TestServer;
beforeAll(async () => { server = await startTestServer(); });
afterAll(async () => { await server?.close(); });

type Item = { monitor_id: string; kind: string; at: Date };
const BUFFER: BufferTable<Item> = { table: 'heartbeat_pings', columns: [['monitor_id', 'text'], ['kind', 'text'], ['at', 'timestamptz']] };

test('one item that fails even alone is set aside whole; the items before and after it are processed once each', async () => {
  const ids = Array.from({ length: 40 }, (_, i) => `m${String(i).padStart(2, '0')}`);
  await server.db.insertInto('heartbeat_pings').values(ids.map((id, i) => ({ monitor_id: id, kind: i === 25 ? 'poison' : 'success', at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) }))).execute();
  const processed: string[] = [];
  const sizes: number[] = [];
  const drain = startDrain<Item>(server.db, {
    name: 'loop-test', buffer: BUFFER, log: createLogger('silent'), batch: 16, pollMs: 20, gapMs: 0, retryMs: 10,
    async process(items) {
      sizes.push(items.length);
      if (items.some((x) => x.kind === 'poison')) throw new Error('cannot process a poisoned item');
      processed.push(...items.map((x) => x.monitor_id));
    },
  });
  try {
    await until('the buffer is empty', async () => Number((await sql<{ n: number }>`select count(*)::int as n from heartbeat_pings`.execute(server.db)).rows[0].n) === 0);
  } finally {
    await drain.stop(0);
  }
  expect(processed.sort()).toEqual(ids.filter((id) => id !== 'm25'));
  // The rounds halved down to the poisoned item alone, which failed SET_ASIDE_AFTER times.
  expect(sizes.filter((n) => n === 1).length).toBeGreaterThanOrEqual(SET_ASIDE_AFTER);
  const rejected = await server.db.selectFrom('ingest_rejected').selectAll().execute();
  expect(rejected).toHaveLength(1);
  expect(rejected[0]).toMatchObject({ source: 'loop-test', error: 'cannot process a poisoned item' });
  expect(rejected[0].item).toMatchObject({ monitor_id: 'm25', kind: 'poison', at: '2026-01-01T00:00:25+00:00' });
  const drained = await server.db.selectFrom('ingest_drained').select('items').where('buffer', '=', 'loop-test').executeTakeFirstOrThrow();
  expect(Number(drained.items)).toBe(39);
});

test('without a way to set items aside, a loop keeps retrying (halving, never below one) and never stops working', async () => {
  const sizes: number[] = [];
  let calls = 0;
  const loop = startLoop({
    name: 'flaky', log: createLogger('silent'), limit: 8, pollMs: 10, gapMs: 0, retryMs: 1,
    async run(n) {
      sizes.push(n);
      if (++calls <= 5) throw new Error('down');
      return calls < 8 ? n : 0;
    },
  });
  await until('the loop recovers', async () => calls >= 9);
  await loop.stop();
  expect(sizes.slice(0, 8)).toEqual([8, 4, 2, 1, 1, 1, 2, 4]);
});

test('an idle loop looks less and less often, up to idleMaxMs; wake() and work found bring it back to pollMs', async () => {
  const starts: number[] = [];
  let work = 0;
  const loop = startLoop({
    name: 'idle-test', log: createLogger('silent'), pollMs: 20, gapMs: 0, idleMaxMs: 320,
    async run() { starts.push(Date.now()); if (work > 0) { work--; return 1; } return 0; },
  });
  try {
    await new Promise((r) => setTimeout(r, 2000));
    // Without backing off it would have looked ~100 times; with it: 20, 40, 80, 160, then every 320 ms.
    expect(starts.length).toBeGreaterThanOrEqual(5);
    expect(starts.length).toBeLessThanOrEqual(14);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]);
    expect(Math.max(...gaps)).toBeLessThan(320 + 250);
    expect(gaps[gaps.length - 1]).toBeGreaterThanOrEqual(300);
    // Woken, it looks at once; work found keeps it looking at the poll's pace.
    const before = starts.length;
    work = 3;
    loop.wake();
    await until('the woken rounds', async () => starts.length >= before + 4, 2000);
    const woken = starts.slice(before).map((t, i, a) => (i === 0 ? 0 : t - a[i - 1]));
    expect(Math.max(...woken.slice(1, 4))).toBeLessThan(200);
  } finally {
    await loop.stop();
  }
});
