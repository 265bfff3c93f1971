/**
 * The analytics drain (docs/analytics.md, step 4): takes buffered events
 * set-wise in time order, assigns sessions, writes the raw events, the
 * sessions, the visitors seen and the hourly and daily roll-ups — all in the
 * transaction that takes them from `analytics_buffer`, so an event is counted
 * exactly once (a crash hands the whole batch back). Sessions depend on the
 * order of events across batches, so one drain runs at a time across every
 * process (a transaction-scoped advisory lock; other workers find it held
 * and wait their turn). A batch costs a fixed number of statements (arrays
 * through `unnest`), whatever its size.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
// Array parameters as their literal text: cheaper than the driver's conversion of thousands of elements.
import { arrayLiteral as arr } from '../db/arrayLiteral';
import type { Db } from '../db/connect';
import { withTryLock } from '../db/locked';
import { setAsideOldest, type BufferTable } from '../ingest/buffer';
import type { Logger } from '../log';
import { startLoop } from '../jobs/loop';
import { assignSessions, ownPairs, Rollup, SESSION_GAP_MS, sessionKey, sessionPairs, whenOf, type Entry, type RollupRow, type BufferedEvent, type Session, type TakenEvent, type When } from './count';
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
  ],
};

/** Its name in `ingest_drained` and the key of its advisory lock. */
const NAME = 'analytics_buffer';

/** Random signed 64-bit session ids, drawn 512 at a time. */
function newSessionIds(): () => string {
  let pool = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at >= pool.length) { pool = randomBytes(8 * 512); at = 0; }
    const id = pool.readBigInt64BE(at).toString();
    at += 8;
    return id;
  };
}

/** INSERT … SELECT FROM unnest(arrays): one statement text whatever the row count. */
function unnest(columns: readonly (readonly [string, string])[], values: unknown[][]) {
  return sql.join(columns.map(([, type], i) => sql`${arr(values[i])}::${sql.raw(type)}[]`));
}
const cols = (columns: readonly (readonly [string, string])[]) => sql.join(columns.map(([c]) => sql.ref(c)));

/** Each visitor's latest session that may still continue (its last event at most 30 minutes before the batch's first). */
async function openSessions(tx: Db, events: TakenEvent[]): Promise<Map<string, Session>> {
  const pairs = new Map<string, [string, string]>();
  for (const e of events) pairs.set(sessionKey(e.site_id, e.visitor), [e.site_id, e.visitor]);
  const since = new Date(events[0].at.getTime() - SESSION_GAP_MS);
  const { rows } = await sql<{ site_id: string; visitor: string; session: string; started_at: Date; last_at: Date; pageviews: number; interactive_events: number; entry: Entry }>`
    select distinct on (s.site_id, s.visitor) s.site_id, s.visitor::text as visitor, s.session::text as session, s.started_at, s.last_at,
        s.pageviews, s.interactive_events, s.entry
      from analytics_sessions s
      join unnest(${arr([...pairs.values()].map((p) => p[0]))}::text[], ${arr([...pairs.values()].map((p) => p[1]))}::bigint[]) k(site_id, visitor)
        on s.site_id = k.site_id and s.visitor = k.visitor
      where s.last_at >= ${since}
      order by s.site_id, s.visitor, s.started_at desc`.execute(tx);
  const open = new Map<string, Session>();
  for (const r of rows) {
    open.set(sessionKey(r.site_id, r.visitor), {
      siteId: r.site_id, visitor: r.visitor, id: r.session, startedAt: r.started_at, lastAt: r.last_at,
      pageviews: r.pageviews, interactiveEvents: r.interactive_events, entry: r.entry,
      before: { lastAt: r.last_at, pageviews: r.pageviews, interactiveEvents: r.interactive_events },
    });
  }
  return open;
}

/** What a batch asks of `analytics_seen` for one visitor and day: the pairs it met, by hash, each with when it was first met. */
interface SeenAsk { siteId: string; day: string; visitor: string; pairs: Map<string, { dimension: string; value: string; when: When }> }

/**
 * Marks the pairs as seen for their visitor and day; returns those that were
 * not yet (each visitor counts once per day under a value). The drain runs
 * alone, so reading the rows and writing them back cannot race.
 */
async function firstSeen(tx: Db, asks: Map<string, SeenAsk>): Promise<{ siteId: string; dimension: string; value: string; when: When }[]> {
  const list = [...asks.values()];
  if (list.length === 0) return [];
  const { rows } = await sql<{ site_id: string; day: string; visitor: string; keys: Buffer }>`
    select s.site_id, s.day, s.visitor::text as visitor, s.keys from analytics_seen s
      join unnest(${arr(list.map((a) => a.siteId))}::text[], ${arr(list.map((a) => a.day))}::date[], ${arr(list.map((a) => a.visitor))}::bigint[]) k(site_id, day, visitor)
        on s.site_id = k.site_id and s.day = k.day and s.visitor = k.visitor`.execute(tx);
  const stored = new Map(rows.map((r) => [visitorDay(r.site_id, r.day, r.visitor), r.keys]));
  const fresh: { siteId: string; dimension: string; value: string; when: When }[] = [];
  const writes: { ask: SeenAsk; keys: Buffer }[] = [];
  for (const [key, ask] of asks) {
    const old = stored.get(key);
    const have = storedKeys(old);
    let added = '';
    for (const [h, p] of ask.pairs) {
      if (has(have, h)) continue;
      added += h;
      fresh.push({ siteId: ask.siteId, ...p });
    }
    if (added) writes.push({ ask, keys: old ? Buffer.concat([old, Buffer.from(added, 'latin1')]) : Buffer.from(added, 'latin1') });
  }
  if (writes.length > 0) {
    await sql`insert into analytics_seen (site_id, day, visitor, keys)
      select * from unnest(${arr(writes.map((w) => w.ask.siteId))}::text[], ${arr(writes.map((w) => w.ask.day))}::date[], ${arr(writes.map((w) => w.ask.visitor))}::bigint[], ${arr(writes.map((w) => w.keys))}::bytea[])
      on conflict (site_id, day, visitor) do update set keys = excluded.keys`.execute(tx);
  }
  return fresh;
}

/** A visitor's stored hashes, searchable: scanned as text while few (most visitors), a set once many (a client posting endless distinct pages must not make each lookup a scan). */
type StoredKeys = string | Set<string>;

function storedKeys(old: Buffer | undefined): StoredKeys {
  if (!old) return '';
  if (old.length <= 64 * HASH_BYTES) return old.toString('latin1');
  const set = new Set<string>();
  for (let i = 0; i + HASH_BYTES <= old.length; i += HASH_BYTES) set.add(old.toString('latin1', i, i + HASH_BYTES));
  return set;
}

/** Whether `keys` holds `h` (in text form: at a hash boundary). */
function has(keys: StoredKeys, h: string): boolean {
  if (typeof keys !== 'string') return keys.has(h);
  for (let i = keys.indexOf(h); i >= 0; i = keys.indexOf(h, i + 1)) if (i % HASH_BYTES === 0) return true;
  return false;
}

/** Bytes of a pair's hash in `analytics_seen.keys`. */
const HASH_BYTES = 8;
const visitorDay = (siteId: string, day: string, visitor: string) => `${siteId}\u0000${day}\u0000${visitor}`;

/** The buffer's columns, which `analytics_events` has too. */
const EVENT_COLUMNS = sql.join(ANALYTICS_BUFFER.columns.map(([c]) => sql.ref(c)));

/** Deletes the taken rows from the buffer and inserts the counted ones (those given a session) into `analytics_events`, in one statement. */
async function moveEvents(tx: Db, taken: TakenEvent[], sessions: Map<number, string>): Promise<void> {
  await sql`with moved as (
      delete from analytics_buffer b using unnest(${arr(taken.map((e) => e.seq))}::bigint[], ${arr(taken.map((e) => sessions.get(e.seq) ?? null))}::bigint[]) u(seq, session)
      where b.seq = u.seq returning b.*, u.session
    ) insert into analytics_events (${EVENT_COLUMNS}, session) select ${EVENT_COLUMNS}, session from moved where session is not null`.execute(tx);
}

/** New sessions inserted with their entry; continuing ones updated in place (HOT: migration 0022). */
async function writeSessions(tx: Db, touched: Session[]): Promise<void> {
  const fresh = touched.filter((s) => s.before === null);
  const going = touched.filter((s) => s.before !== null);
  if (fresh.length > 0) {
    const columns = [['site_id', 'text'], ['visitor', 'bigint'], ['session', 'bigint'], ['started_at', 'timestamptz'], ['last_at', 'timestamptz'],
      ['pageviews', 'int4'], ['interactive_events', 'int4'], ['entry', 'jsonb']] as const;
    await sql`insert into analytics_sessions (${cols(columns)})
      select * from unnest(${unnest(columns, [fresh.map((s) => s.siteId), fresh.map((s) => s.visitor), fresh.map((s) => s.id), fresh.map((s) => s.startedAt),
        fresh.map((s) => s.lastAt), fresh.map((s) => s.pageviews), fresh.map((s) => s.interactiveEvents), fresh.map((s) => JSON.stringify(s.entry))])})`.execute(tx);
  }
  if (going.length > 0) {
    await sql`update analytics_sessions s set last_at = u.last_at, pageviews = u.pageviews, interactive_events = u.interactive_events
      from unnest(${arr(going.map((s) => s.siteId))}::text[], ${arr(going.map((s) => s.visitor))}::bigint[], ${arr(going.map((s) => s.startedAt))}::timestamptz[],
        ${arr(going.map((s) => s.lastAt))}::timestamptz[], ${arr(going.map((s) => s.pageviews))}::int4[], ${arr(going.map((s) => s.interactiveEvents))}::int4[])
        u(site_id, visitor, started_at, last_at, pageviews, interactive_events)
      where s.site_id = u.site_id and s.visitor = u.visitor and s.started_at = u.started_at`.execute(tx);
  }
}

/** Each roll-up table's period column. */
const PERIOD = {
  analytics_hourly: ['hour', 'timestamptz'],
  analytics_daily: ['day', 'date'],
  analytics_monthly: ['month', 'date'],
} as const;

async function writeRollup(tx: Db, table: keyof typeof PERIOD, list: RollupRow[]): Promise<void> {
  if (list.length === 0) return;
  const unit = PERIOD[table];
  const metrics = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'] as const;
  const columns = [['site_id', 'text'], unit, ['dimension', 'text'], ['value', 'text'], ...metrics.map((m) => [m, 'int8'] as const)] as const;
  const values = [list.map((r) => r.siteId), list.map((r) => r.at), list.map((r) => r.dimension), list.map((r) => r.value), ...metrics.map((m) => list.map((r) => r.c[m]))];
  await sql`insert into ${sql.table(table)} as t (${cols(columns)}) select * from unnest(${unnest(columns, values)})
    on conflict (site_id, dimension, ${sql.ref(unit[0])}, value) do update set
      ${sql.join(metrics.map((m) => sql`${sql.ref(m)} = ${sql.ref(`t.${m}`)} + ${sql.ref(`excluded.${m}`)}`))}`.execute(tx);
}

/** The hashes (dimension, value) pairs are remembered by in `analytics_seen.keys`, per dimension and value. */
class PairHashes {
  private readonly byDim = new Map<string, Map<string, string>>();
  of(dimension: string, value: string): string {
    let values = this.byDim.get(dimension);
    if (!values) this.byDim.set(dimension, (values = new Map()));
    let h = values.get(value);
    if (h === undefined) values.set(value, (h = createHash('sha256').update(`${dimension}\u0000${value}`).digest().toString('latin1', 0, HASH_BYTES)));
    return h;
  }
}

/**
 * Counts one batch inside the transaction that took it, then moves its
 * events into `analytics_events` (server-side: only their sessions are sent).
 */
async function countBatch(tx: Db, taken: TakenEvent[]): Promise<void> {
  const siteIds = [...new Set(taken.map((e) => e.site_id))];
  // A site deleted since its events were accepted: its events go with it.
  const { rows: live } = await sql<{ id: string }>`select id from analytics_sites where id = any(${siteIds}::text[])`.execute(tx);
  const known = new Set(live.map((r) => r.id));
  const events = taken.filter((e) => known.has(e.site_id)).sort((a, b) => a.at.getTime() - b.at.getTime() || a.seq - b.seq);
  if (events.length === 0) return moveEvents(tx, taken, new Map());

  const open = await openSessions(tx, events);
  const { sessionOf, touched } = assignSessions(events, open, newSessionIds());
  const rollup = new Rollup();
  const asks = new Map<string, SeenAsk>();
  const hashes = new PairHashes();
  const see = (ask: SeenAsk, when: When, dimension: string, value: string) => {
    const h = hashes.of(dimension, value);
    if (!ask.pairs.has(h)) ask.pairs.set(h, { dimension, value, when });
  };

  // Per session: its ask of analytics_seen (for its day), and its pageviews and events per hour, added once under each of its pairs.
  const perSession = new Map<Session, { ask: SeenAsk; hours: Map<When, { pageviews: number; events: number }> }>();
  const sessions = new Map<number, string>();
  events.forEach((e, i) => {
    const s = sessionOf[i];
    sessions.set(e.seq, s.id);
    const when = whenOf(e.at);
    const metric = e.name === 'pageview' ? 'pageviews' : 'events';
    let mine = perSession.get(s);
    if (!mine || mine.ask.day !== when.day) {
      const vd = visitorDay(e.site_id, when.day, e.visitor);
      let ask = asks.get(vd);
      if (!ask) asks.set(vd, (ask = { siteId: e.site_id, day: when.day, visitor: e.visitor, pairs: new Map() }));
      // The totals and the session's values were seen when a session stored earlier that day began.
      if (!(s.before !== null && whenOf(s.startedAt).day === when.day)) for (const [d, v] of sessionPairs(s)) see(ask, when, d, v);
      perSession.set(s, (mine = { ask, hours: mine?.hours ?? new Map() }));
    }
    let acc = mine.hours.get(when);
    if (!acc) mine.hours.set(when, (acc = { pageviews: 0, events: 0 }));
    acc[metric]++;
    const b = rollup.bucket(e.site_id, when);
    for (const [d, v] of ownPairs(e)) {
      rollup.add(b, d, v, metric, 1);
      see(mine.ask, when, d, v);
    }
  });
  for (const [s, { hours }] of perSession) {
    for (const [when, counts] of hours) {
      const b = rollup.bucket(s.siteId, when);
      for (const [d, v] of sessionPairs(s)) rollup.addCounts(b, d, v, counts);
    }
  }
  for (const s of touched) rollup.addSession(s);
  for (const k of await firstSeen(tx, asks)) rollup.add(rollup.bucket(k.siteId, k.when), k.dimension, k.value, 'visitors', 1);

  await moveEvents(tx, taken, sessions);
  await writeSessions(tx, touched);
  await writeRollup(tx, 'analytics_hourly', rollup.hourly());
  await writeRollup(tx, 'analytics_daily', rollup.daily());
  await writeRollup(tx, 'analytics_monthly', rollup.monthly());
}

/**
 * Takes and counts one batch of up to `limit` events, oldest first. Returns
 * the events taken, or null when another process is draining now.
 */
export async function drainAnalyticsOnce(db: Db, limit = 5000): Promise<number | null> {
  return withTryLock(db, `ingest:${NAME}`, async (tx) => {
    const list = sql.join(ANALYTICS_BUFFER.columns.filter(([c]) => c !== 'hostname' && c !== 'referrer')
      .map(([c, type]) => (type === 'bigint' || type === 'jsonb' ? sql`${sql.ref(`t.${c}`)}::text as ${sql.ref(c)}` : sql.ref(`t.${c}`))));
    // Locked now, deleted as they move into analytics_events (moveEvents).
    const { rows } = await sql<TakenEvent>`select t.seq, ${list} from analytics_buffer t order by t.seq limit ${limit} for update skip locked`.execute(tx);
    if (rows.length === 0) return 0;
    await countBatch(tx, rows);
    await sql`insert into ingest_drained (buffer, items) values (${NAME}, ${rows.length})
      on conflict (buffer) do update set items = ingest_drained.items + excluded.items`.execute(tx);
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

/** Drains in this process woken by a local append (ingest.ts), so events count at once instead of at the next poll. */
const wakers = new Set<() => void>();

/** Tells local drains that events were appended. */
export function wakeAnalyticsDrain(): void {
  for (const wake of wakers) wake();
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
  const wake = () => loop.wake();

  const house = () => analyticsHousekeeping(db).catch((e: unknown) => alog.error('analytics housekeeping', e));
  void house();
  const houseTimer = setInterval(() => void house(), o.housekeepingMs ?? 10 * 60_000);
  houseTimer.unref();
  wakers.add(wake);
  return {
    async stop(finishMs = 1000) {
      wakers.delete(wake);
      clearInterval(houseTimer);
      await loop.stop();
      await drainAnalytics(db, { untilMs: finishMs }).catch((e: unknown) => alog.error('counting analytics events at shutdown (left for the next worker)', e));
    },
  };
}
