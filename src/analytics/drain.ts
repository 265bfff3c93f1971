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
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import type { BufferTable } from '../ingest/buffer';
import type { Logger } from '../log';
import { assignSessions, dayOf, eventValues, Rollup, SESSION_DIMENSIONS, SESSION_GAP_MS, sessionKey, type Entry, type RollupRow, type Session, type TakenEvent } from './count';
import { analyticsHousekeeping } from './housekeeping';

/** What ingestion appends: an event parsed and hashed (no IP, no user agent). */
export interface BufferedEvent extends Omit<TakenEvent, 'seq'> {}

/** `analytics_buffer` and its columns' types, for `bufferWriter`. */
export const ANALYTICS_BUFFER: BufferTable<BufferedEvent> = {
  table: 'analytics_buffer',
  columns: [
    ['site_id', 'text'], ['at', 'timestamptz'], ['name', 'text'], ['pathname', 'text'], ['hostname', 'text'],
    ['referrer', 'text'], ['referrer_source', 'text'], ['country', 'text'], ['browser', 'text'], ['os', 'text'], ['device', 'text'],
    ['utm_source', 'text'], ['utm_medium', 'text'], ['utm_campaign', 'text'], ['props', 'jsonb'], ['visitor', 'bigint'], ['interactive', 'boolean'],
  ],
};

/** Its name in `ingest_drained` and the key of its advisory lock. */
const NAME = 'analytics_buffer';

const newSessionId = (): string => randomBytes(8).readBigInt64BE(0).toString();

/** INSERT … SELECT FROM unnest(arrays): one statement text whatever the row count. */
function unnest(columns: readonly (readonly [string, string])[], values: unknown[][]) {
  return sql.join(columns.map(([, type], i) => sql`${values[i]}::${sql.raw(type)}[]`));
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
      join unnest(${[...pairs.values()].map((p) => p[0])}::text[], ${[...pairs.values()].map((p) => p[1])}::bigint[]) k(site_id, visitor)
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

/** Marks the (day, dimension, value, visitor) keys as seen; returns those that were not yet, with the time each was first met. */
async function firstSeen(tx: Db, keys: Map<string, { siteId: string; day: string; dimension: string; value: string; visitor: string; at: Date }>) {
  const list = [...keys.values()];
  if (list.length === 0) return [];
  const columns = [['site_id', 'text'], ['day', 'date'], ['dimension', 'text'], ['value', 'text'], ['visitor', 'bigint']] as const;
  const { rows } = await sql<{ site_id: string; day: string; dimension: string; value: string; visitor: string }>`
    insert into analytics_seen (${cols(columns)})
    select * from unnest(${unnest(columns, [list.map((k) => k.siteId), list.map((k) => k.day), list.map((k) => k.dimension), list.map((k) => k.value), list.map((k) => k.visitor)])})
    on conflict do nothing
    returning site_id, day, dimension, value, visitor::text as visitor`.execute(tx);
  return rows.map((r) => keys.get(seenKey(r.site_id, r.day, r.dimension, r.value, r.visitor))!);
}

/** The pairs fixed for a whole session. */
const SESSION_LEVEL = new Set<string>(['', ...SESSION_DIMENSIONS]);

const seenKey = (siteId: string, day: string, dimension: string, value: string, visitor: string) => `${siteId}\u0000${day}\u0000${dimension}\u0000${value}\u0000${visitor}`;

async function writeEvents(tx: Db, events: TakenEvent[], sessionOf: Session[]): Promise<void> {
  const columns = [...ANALYTICS_BUFFER.columns, ['session', 'bigint']] as const;
  const values = columns.map(([c]) => (c === 'session' ? sessionOf.map((s) => s.id) : events.map((e) => e[c as keyof TakenEvent])));
  await sql`insert into analytics_events (${cols(columns)}) select * from unnest(${unnest(columns, values)})`.execute(tx);
}

async function writeSessions(tx: Db, touched: Session[]): Promise<void> {
  const columns = [['site_id', 'text'], ['visitor', 'bigint'], ['session', 'bigint'], ['started_at', 'timestamptz'], ['last_at', 'timestamptz'],
    ['pageviews', 'int4'], ['interactive_events', 'int4'], ['entry', 'jsonb']] as const;
  await sql`insert into analytics_sessions (${cols(columns)})
    select * from unnest(${unnest(columns, [touched.map((s) => s.siteId), touched.map((s) => s.visitor), touched.map((s) => s.id), touched.map((s) => s.startedAt),
      touched.map((s) => s.lastAt), touched.map((s) => s.pageviews), touched.map((s) => s.interactiveEvents), touched.map((s) => JSON.stringify(s.entry))])})
    on conflict (site_id, visitor, started_at) do update
      set last_at = excluded.last_at, pageviews = excluded.pageviews, interactive_events = excluded.interactive_events`.execute(tx);
}

async function writeRollup(tx: Db, table: 'analytics_hourly' | 'analytics_daily', rows: Map<string, RollupRow>): Promise<void> {
  const list = [...rows.keys()].sort().map((k) => rows.get(k)!);
  if (list.length === 0) return;
  const unit = table === 'analytics_hourly' ? ['hour', 'timestamptz'] as const : ['day', 'date'] as const;
  const metrics = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'] as const;
  const columns = [['site_id', 'text'], unit, ['dimension', 'text'], ['value', 'text'], ...metrics.map((m) => [m, 'int8'] as const)] as const;
  const values = [list.map((r) => r.siteId), list.map((r) => r.at), list.map((r) => r.dimension), list.map((r) => r.value), ...metrics.map((m) => list.map((r) => r.c[m]))];
  await sql`insert into ${sql.table(table)} as t (${cols(columns)}) select * from unnest(${unnest(columns, values)})
    on conflict (site_id, dimension, ${sql.ref(unit[0])}, value) do update set
      ${sql.join(metrics.map((m) => sql`${sql.ref(m)} = ${sql.ref(`t.${m}`)} + ${sql.ref(`excluded.${m}`)}`))}`.execute(tx);
}

/** Counts one batch inside the transaction that took it. */
async function countBatch(tx: Db, taken: TakenEvent[]): Promise<void> {
  const siteIds = [...new Set(taken.map((e) => e.site_id))];
  // A site deleted since its events were accepted: its events go with it.
  const { rows: live } = await sql<{ id: string }>`select id from analytics_sites where id = any(${siteIds}::text[])`.execute(tx);
  const known = new Set(live.map((r) => r.id));
  const events = taken.filter((e) => known.has(e.site_id)).sort((a, b) => a.at.getTime() - b.at.getTime() || a.seq - b.seq);
  if (events.length === 0) return;

  const open = await openSessions(tx, events);
  const { sessionOf, touched } = assignSessions(events, open, newSessionId);
  const rollup = new Rollup();
  const seen = new Map<string, { siteId: string; day: string; dimension: string; value: string; visitor: string; at: Date }>();
  const see = (e: TakenEvent, day: string, dimension: string, value: string) => {
    const key = seenKey(e.site_id, day, dimension, value, e.visitor);
    if (!seen.has(key)) seen.set(key, { siteId: e.site_id, day, dimension, value, visitor: e.visitor, at: e.at });
  };

  events.forEach((e, i) => {
    const s = sessionOf[i];
    const day = dayOf(e.at);
    const { pairs, props } = eventValues(e, s);
    const metric = e.name === 'pageview' ? 'pageviews' : 'events';
    // The totals and the session's values were seen when a session stored earlier that day began.
    const known = s.before !== null && dayOf(s.startedAt) === day;
    for (const [d, v] of pairs) {
      rollup.add(e.site_id, e.at, d, v, metric, 1);
      if (!(known && SESSION_LEVEL.has(d))) see(e, day, d, v);
    }
    for (const [d, v] of props) {
      rollup.add(e.site_id, e.at, d, v, metric, 1);
      see(e, day, d, v);
    }
  });
  for (const s of touched) rollup.addSession(s);
  for (const k of await firstSeen(tx, seen)) rollup.add(k.siteId, k.at, k.dimension, k.value, 'visitors', 1);

  await writeEvents(tx, events, sessionOf);
  await writeSessions(tx, touched);
  await writeRollup(tx, 'analytics_hourly', rollup.hourly);
  await writeRollup(tx, 'analytics_daily', rollup.daily);
}

/**
 * Takes and counts one batch of up to `limit` events, oldest first. Returns
 * the events taken, or null when another process is draining now.
 */
export async function drainAnalyticsOnce(db: Db, limit = 5000): Promise<number | null> {
  return db.transaction().execute(async (tx) => {
    const { rows: [lock] } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtext(${`ingest:${NAME}`})) as ok`.execute(tx);
    if (!lock.ok) return null;
    const list = sql.join(ANALYTICS_BUFFER.columns.map(([c, type]) => (type === 'bigint' || type === 'jsonb' ? sql`${sql.ref(`t.${c}`)}::text as ${sql.ref(c)}` : sql.ref(`t.${c}`))));
    const { rows } = await sql<TakenEvent>`with taken as (
        select seq from analytics_buffer order by seq limit ${limit} for update skip locked
      ) delete from analytics_buffer t using taken where t.seq = taken.seq returning t.seq, ${list}`.execute(tx);
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
 * Runs the drain in a worker: a batch at once while batches come back full,
 * `gapMs` after a partial batch when more was appended meanwhile, every
 * `pollMs` otherwise (and while another process drains). Housekeeping
 * (housekeeping.ts) runs at start and every `housekeepingMs`.
 */
export function startAnalyticsDrain(db: Db, log: Logger, o: { batch?: number; pollMs?: number; gapMs?: number; housekeepingMs?: number } = {}): AnalyticsDrain {
  const alog = log.child({ component: 'analytics' });
  const batch = o.batch ?? 5000;
  const pollMs = o.pollMs ?? 150;
  const gapMs = o.gapMs ?? 50;
  let stopped = false;
  let busy = false;
  let woken = false;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Infinity;
  let running: Promise<unknown> = Promise.resolve();

  const schedule = (ms: number) => {
    if (stopped) return;
    const at = Date.now() + ms;
    if (timer && at >= dueAt) return;
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(tick, ms);
  };
  const wake = () => { if (busy) woken = true; else schedule(gapMs); };
  const tick = () => {
    timer = undefined;
    dueAt = Infinity;
    busy = true;
    woken = false;
    running = drainAnalyticsOnce(db, batch).then((n) => {
      busy = false;
      if (n !== null && n >= batch) schedule(0);
      else schedule(woken ? gapMs : pollMs);
    }, (e: unknown) => {
      busy = false;
      alog.error('counting analytics events', e);
      schedule(1000);
    });
  };

  const house = () => analyticsHousekeeping(db).catch((e: unknown) => alog.error('analytics housekeeping', e));
  void house();
  const houseTimer = setInterval(() => void house(), o.housekeepingMs ?? 10 * 60_000);
  houseTimer.unref();
  wakers.add(wake);
  schedule(0);
  return {
    async stop(finishMs = 1000) {
      stopped = true;
      wakers.delete(wake);
      clearTimeout(timer);
      clearInterval(houseTimer);
      await running;
      await drainAnalytics(db, { untilMs: finishMs }).catch((e: unknown) => alog.error('counting analytics events at shutdown (left for the next worker)', e));
    },
  };
}
