/**
 * The analytics drain (docs/analytics.md, step 4): takes buffered events
 * set-wise in time order and counts them (batch.ts: sessions, raw events,
 * the visitors seen and the roll-ups), all in the transaction that takes
 * them from `analytics_buffer`, so an event is counted exactly once (a
 * crash hands the whole batch back). Sessions depend on the order of events
 * across batches, so one drain runs at a time across every process (a
 * transaction-scoped advisory lock; other workers find it held and wait
 * their turn).
 */
import { sql } from 'kysely';
// Array parameters as their literal text: cheaper than the driver's conversion of thousands of elements.
import { arrayLiteral as arr } from '../db/arrayLiteral';
import type { Db } from '../db/connect';
import { withTryLock } from '../db/locked';
import { onAppend, setAsideOldest, type BufferTable } from '../ingest/buffer';
import type { Logger } from '../log';
import { startLoop } from '../jobs/loop';
import { countBatch, type Write } from './batch';
import type { BufferedEvent, TakenEvent } from './count';
import { analyticsHousekeeping } from './housekeeping';

export type { BufferedEvent } from './count';

/** `analytics_buffer` and its columns' types, for `bufferWriter` (batches as JSON: 17 columns, most of them text). */
export const ANALYTICS_BUFFER: BufferTable<BufferedEvent> = {
  table: 'analytics_buffer',
  encoding: 'json',
  columns: [
    ['site_id', 'text'], ['at', 'timestamptz'], ['name', 'text'], ['pathname', 'text'], ['hostname', 'text'],
    ['referrer', 'text'], ['referrer_source', 'text'], ['country', 'text'], ['browser', 'text'], ['os', 'text'], ['device', 'text'],
    ['utm_source', 'text'], ['utm_medium', 'text'], ['utm_campaign', 'text'], ['props', 'jsonb'], ['visitor', 'bigint'], ['interactive', 'boolean'],
    ['previous_visitor', 'bigint'],
  ],
};

/** Its name in `ingest_drained` and the key of its advisory lock. */
const NAME = 'analytics_buffer';

/** The buffer's columns that `analytics_events` has too (all but the previous day's visitor hash). */
const EVENT_COLUMNS = sql.join(ANALYTICS_BUFFER.columns.filter(([c]) => c !== 'previous_visitor').map(([c]) => sql.ref(c)));

/** Deletes the taken rows from the buffer and inserts the counted ones (those given a session) into `analytics_events`: only their sessions are sent. */
function moveEvents(taken: TakenEvent[], sessions: (string | null)[]): Write[] {
  return [
    ['moved', sql`delete from analytics_buffer b using unnest(${arr(taken.map((e) => e.seq))}::bigint[], ${arr(sessions)}::bigint[]) u(seq, session)
      where b.seq = u.seq returning b.*, u.session`],
    ['kept', sql`insert into analytics_events (${EVENT_COLUMNS}, session) select ${EVENT_COLUMNS}, session from moved where session is not null`],
  ];
}

/**
 * Takes and counts one batch of up to `limit` events, oldest first. Returns
 * the events taken, or null when another process is draining now.
 */
export async function drainAnalyticsOnce(db: Db, limit = 5000): Promise<number | null> {
  // An idle drain polls: an empty buffer is answered without a transaction or the lock.
  const { rows: [any] } = await sql<{ x: boolean }>`select exists (select 1 from analytics_buffer) as x`.execute(db);
  if (!any.x) return 0;
  return withTryLock(db, `ingest:${NAME}`, async (tx) => {
    const list = sql.join(ANALYTICS_BUFFER.columns.filter(([c]) => c !== 'hostname' && c !== 'referrer')
      .map(([c, type]) => (type === 'bigint' || type === 'jsonb' ? sql`${sql.ref(`t.${c}`)}::text as ${sql.ref(c)}` : sql.ref(`t.${c}`))));
    // Locked now, deleted as they move into analytics_events (moveEvents).
    const { rows } = await sql<TakenEvent>`select t.seq, ${list} from analytics_buffer t order by t.seq limit ${limit} for update skip locked`.execute(tx);
    if (rows.length === 0) return 0;
    await countBatch(tx, rows, NAME, moveEvents);
    return rows.length;
  });
}

/** Drains until the buffer is empty (tests, shutdown); waits while another process holds the drain. */
export async function drainAnalytics(db: Db, o: { limit?: number; untilMs?: number } = {}): Promise<number> {
  const end = Date.now() + (o.untilMs ?? 10_000);
  let total = 0;
  while (Date.now() < end) {
    const n = await drainAnalyticsOnce(db, o.limit);
    if (n === 0) break;
    if (n === null) await new Promise((r) => setTimeout(r, 20));
    else total += n;
  }
  return total;
}

/** A running drain loop. */
export interface AnalyticsDrain {
  /** Stops after the batch under way, then drains what is left for up to `finishMs`. */
  stop(finishMs?: number): Promise<void>;
}

/**
 * Least time between the starts of two batches that were not full. A batch
 * costs a fixed dozen statements, and its roll-up, session and seen rows are
 * per distinct value, visitor and session, not per event: under load, 200 ms
 * of events (several hundred to a thousand) cost Vigil and PostgreSQL about a
 * fifth less per event than the loop's default 50 ms (bench:analytics). Not
 * more: counting a batch is synchronous JavaScript between its statements,
 * and at 500 ms its longer stretches lifted the events' p99 from ~45 to ~70 ms.
 * A worker process of its own (`npm run worker`) serves no request and takes
 * more (src/worker-main.ts).
 */
const GAP_MS = 200;

/**
 * Runs the drain in a worker on the shared loop (src/jobs/loop.ts): a batch
 * at once while batches come back full, `gapMs` (200 ms) after a partial batch, every
 * `pollMs` when idle (and while another process drains); an event accepted
 * in this process wakes it. Housekeeping
 * (housekeeping.ts) runs at start and every `housekeepingMs`.
 */
export function startAnalyticsDrain(db: Db, log: Logger, o: { batch?: number; pollMs?: number; gapMs?: number; housekeepingMs?: number } = {}): AnalyticsDrain {
  const alog = log.child({ component: 'analytics' });
  const batch = o.batch ?? 5000;
  const loop = startLoop({
    name: 'counting analytics events', log: alog, run: (n) => drainAnalyticsOnce(db, n), limit: batch, pollMs: o.pollMs, gapMs: o.gapMs ?? GAP_MS,
    setAside: (error) => setAsideOldest(db, NAME, 'analytics_buffer', error),
  });
  // Events ingestion could not count at once (countAtOnce) are buffered: the drain starts at once rather than at its next poll.
  const unlisten = onAppend(ANALYTICS_BUFFER.table, () => loop.wake());

  const house = () => analyticsHousekeeping(db).catch((e: unknown) => alog.error('analytics housekeeping', e));
  void house();
  const houseTimer = setInterval(() => void house(), o.housekeepingMs ?? 10 * 60_000);
  houseTimer.unref();
  return {
    async stop(finishMs = 1000) {
      unlisten();
      clearInterval(houseTimer);
      await loop.stop();
      await drainAnalytics(db, { untilMs: finishMs }).catch((e: unknown) => alog.error('counting analytics events at shutdown (left for the next worker)', e));
    },
  };
}
