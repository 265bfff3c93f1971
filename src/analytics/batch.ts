/**
 * Counting one batch of events in the transaction that holds the drain's
 * lock (docs/analytics.md, step 4), in two statements whatever its size:
 * one read (which of its sites still exist, its visitors' open sessions,
 * what each visitor was already seen under that day), the counting in
 * JavaScript (count.ts), then one write (the raw events, the sessions, the
 * seen keys, the hourly, daily and monthly roll-ups and the count of events
 * counted, as data-modifying CTEs). Round trips, not rows, are what a batch
 * costs under load: each waits for the event loop's turn behind the
 * requests being answered, so a dozen statements made a batch ~40 ms
 * where these two and the transaction's ends take a third of it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
// Array parameters as their literal text: cheaper than the driver's conversion of thousands of elements.
import { arrayLiteral as arr } from '../db/arrayLiteral';
import type { Db } from '../db/connect';
import { assignSessions, ownPairs, Rollup, SESSION_GAP_MS, sessionKey, sessionPairs, whenOf, type CountedEvent, type Entry, type RollupRow, type Session, type When } from './count';

/** A CTE of the write statement: its name and its data-modifying statement. */
export type Write = [name: string, statement: RawBuilder<unknown>];

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

/** `unnest(arrays)`'s arguments: one statement text whatever the row count. */
function unnest(columns: readonly (readonly [string, string])[], values: unknown[][]) {
  return sql.join(columns.map(([, type], i) => sql`${arr(values[i])}::${sql.raw(type)}[]`));
}
const cols = (columns: readonly (readonly [string, string])[]) => sql.join(columns.map(([c]) => sql.ref(c)));

/** Bytes of a pair's hash in `analytics_seen.keys`. */
const HASH_BYTES = 8;
const visitorDay = (siteId: string, day: string, visitor: string) => `${siteId}\u0000${day}\u0000${visitor}`;

interface StoredSession { site_id: string; visitor: string; session: string; started_at: string; last_at: string; pageviews: number; interactive_events: number; entry: Entry }
interface StoredSeen { site_id: string; day: string; visitor: string; keys: string }

/** What the batch reads before counting. */
interface State {
  /** Its sites that still exist. */
  live: Set<string>;
  /** Each visitor's latest session that may still continue (its last event at most 30 minutes before the batch's first). */
  open: Map<string, Session>;
  /** Each visitor's seen keys of a day the batch touches (by visitorDay). */
  seen: Map<string, Buffer>;
}

/** One statement: the live sites, the open sessions and the seen keys of the batch's visitors (as JSON: one row, three values). */
async function readState(tx: Db, events: CountedEvent[]): Promise<State> {
  const sites = new Set<string>();
  const visitors = new Map<string, [string, string]>();
  const days = new Map<string, [string, string, string]>();
  let first = Infinity;
  for (const e of events) {
    sites.add(e.site_id);
    visitors.set(sessionKey(e.site_id, e.visitor), [e.site_id, e.visitor]);
    if (e.previous_visitor !== null) visitors.set(sessionKey(e.site_id, e.previous_visitor), [e.site_id, e.previous_visitor]);
    const day = whenOf(e.at).day;
    days.set(visitorDay(e.site_id, day, e.visitor), [e.site_id, day, e.visitor]);
    first = Math.min(first, e.at.getTime());
  }
  const v = [...visitors.values()];
  const d = [...days.values()];
  const { rows: [r] } = await sql<{ live: string[]; open: StoredSession[]; seen: StoredSeen[] }>`select
    (select coalesce(json_agg(id), '[]') from analytics_sites where id = any(${arr([...sites])}::text[])) as live,
    (select coalesce(json_agg(o), '[]') from (
      select distinct on (s.site_id, s.visitor) s.site_id, s.visitor::text as visitor, s.session::text as session, s.started_at, s.last_at,
          s.pageviews, s.interactive_events, s.entry
        from analytics_sessions s
        join unnest(${arr(v.map((p) => p[0]))}::text[], ${arr(v.map((p) => p[1]))}::bigint[]) k(site_id, visitor) on s.site_id = k.site_id and s.visitor = k.visitor
        where s.last_at >= ${new Date(first - SESSION_GAP_MS)}
        order by s.site_id, s.visitor, s.started_at desc) o) as open,
    (select coalesce(json_agg(json_build_object('site_id', s.site_id, 'day', s.day, 'visitor', s.visitor::text, 'keys', encode(s.keys, 'hex'))), '[]')
      from analytics_seen s
      join unnest(${arr(d.map((p) => p[0]))}::text[], ${arr(d.map((p) => p[1]))}::date[], ${arr(d.map((p) => p[2]))}::bigint[]) k(site_id, day, visitor)
        on s.site_id = k.site_id and s.day = k.day and s.visitor = k.visitor) as seen`.execute(tx);
  const open = new Map<string, Session>();
  for (const s of r.open) {
    const lastAt = new Date(s.last_at);
    open.set(sessionKey(s.site_id, s.visitor), {
      siteId: s.site_id, visitor: s.visitor, id: s.session, startedAt: new Date(s.started_at), lastAt,
      pageviews: s.pageviews, interactiveEvents: s.interactive_events, entry: s.entry,
      before: { lastAt, pageviews: s.pageviews, interactiveEvents: s.interactive_events, visitor: s.visitor },
    });
  }
  return { live: new Set(r.live), open, seen: new Map(r.seen.map((s) => [visitorDay(s.site_id, s.day, s.visitor), Buffer.from(s.keys, 'hex')])) };
}

/** What a batch asks of `analytics_seen` for one visitor and day: the pairs it met, by hash, each with when it was first met. */
interface SeenAsk { siteId: string; day: string; visitor: string; pairs: Map<string, { dimension: string; value: string; when: When }> }
type Fresh = { siteId: string; dimension: string; value: string; when: When };

/**
 * The pairs not yet seen for their visitor and day (each visitor counts
 * once per day under a value), and the write marking them seen. The
 * counting runs alone (the drain's lock), so the keys read cannot change
 * before they are written back.
 */
function firstSeen(stored: Map<string, Buffer>, asks: Map<string, SeenAsk>): { fresh: Fresh[]; write: Write | null } {
  const fresh: Fresh[] = [];
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
  if (writes.length === 0) return { fresh, write: null };
  return {
    fresh,
    write: ['seen', sql`insert into analytics_seen (site_id, day, visitor, keys)
      select * from unnest(${arr(writes.map((w) => w.ask.siteId))}::text[], ${arr(writes.map((w) => w.ask.day))}::date[], ${arr(writes.map((w) => w.ask.visitor))}::bigint[], ${arr(writes.map((w) => w.keys))}::bytea[])
      on conflict (site_id, day, visitor) do update set keys = excluded.keys`],
  };
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

/** New sessions inserted with their entry; continuing ones updated in place (HOT: migration 0022; not for the few continued across midnight, whose visitor changes). */
function sessionWrites(touched: Session[]): Write[] {
  const out: Write[] = [];
  const fresh = touched.filter((s) => s.before === null);
  const going = touched.filter((s) => s.before !== null);
  if (fresh.length > 0) {
    const columns = [['site_id', 'text'], ['visitor', 'bigint'], ['session', 'bigint'], ['started_at', 'timestamptz'], ['last_at', 'timestamptz'],
      ['pageviews', 'int4'], ['interactive_events', 'int4'], ['entry', 'jsonb']] as const;
    out.push(['sessions_new', sql`insert into analytics_sessions (${cols(columns)})
      select * from unnest(${unnest(columns, [fresh.map((s) => s.siteId), fresh.map((s) => s.visitor), fresh.map((s) => s.id), fresh.map((s) => s.startedAt),
        fresh.map((s) => s.lastAt), fresh.map((s) => s.pageviews), fresh.map((s) => s.interactiveEvents), fresh.map((s) => JSON.stringify(s.entry))])})`]);
  }
  if (going.length > 0) {
    out.push(['sessions_on', sql`update analytics_sessions s set visitor = u.visitor, last_at = u.last_at, pageviews = u.pageviews, interactive_events = u.interactive_events
      from unnest(${arr(going.map((s) => s.siteId))}::text[], ${arr(going.map((s) => s.before!.visitor))}::bigint[], ${arr(going.map((s) => s.visitor))}::bigint[],
        ${arr(going.map((s) => s.startedAt))}::timestamptz[], ${arr(going.map((s) => s.lastAt))}::timestamptz[], ${arr(going.map((s) => s.pageviews))}::int4[],
        ${arr(going.map((s) => s.interactiveEvents))}::int4[])
        u(site_id, stored, visitor, started_at, last_at, pageviews, interactive_events)
      where s.site_id = u.site_id and s.visitor = u.stored and s.started_at = u.started_at`]);
  }
  return out;
}

/** Each roll-up table's period column. */
const PERIOD = {
  analytics_hourly: ['hour', 'timestamptz'],
  analytics_daily: ['day', 'date'],
  analytics_monthly: ['month', 'date'],
} as const;

function rollupWrite(table: keyof typeof PERIOD, list: RollupRow[]): Write[] {
  if (list.length === 0) return [];
  const unit = PERIOD[table];
  const metrics = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'] as const;
  const columns = [['site_id', 'text'], unit, ['dimension', 'text'], ['value', 'text'], ...metrics.map((m) => [m, 'int8'] as const)] as const;
  const values = [list.map((r) => r.siteId), list.map((r) => r.at), list.map((r) => r.dimension), list.map((r) => r.value), ...metrics.map((m) => list.map((r) => r.c[m]))];
  return [[table, sql`insert into ${sql.table(table)} as t (${cols(columns)}) select * from unnest(${unnest(columns, values)})
    on conflict (site_id, dimension, ${sql.ref(unit[0])}, value) do update set
      ${sql.join(metrics.map((m) => sql`${sql.ref(m)} = ${sql.ref(`t.${m}`)} + ${sql.ref(`excluded.${m}`)}`))}`]];
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
 * Counts one batch (`taken`, in any order) inside the transaction that
 * holds the drain's lock. `store` gives the writes that keep its events,
 * handed each event's session (null: its site is gone, the event is not
 * kept); `counted` the events to add to `ingest_drained` under `name`.
 */
export async function countBatch<E extends CountedEvent>(tx: Db, taken: E[], name: string, store: (events: E[], sessions: (string | null)[]) => Write[]): Promise<void> {
  const { live, open, seen } = await readState(tx, taken);
  const sessions: (string | null)[] = taken.map(() => null);
  // Time order, ties in the order taken: each event's place in `taken` travels with it. A site deleted since its events were accepted: its events go with it.
  const order = taken.map((_, i) => i).filter((i) => live.has(taken[i].site_id))
    .sort((a, b) => taken[a].at.getTime() - taken[b].at.getTime() || a - b);
  const events = order.map((i) => taken[i]);

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
  events.forEach((e, i) => {
    const s = sessionOf[i];
    sessions[order[i]] = s.id;
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
  const { fresh, write: seenWrite } = firstSeen(seen, asks);
  for (const k of fresh) rollup.add(rollup.bucket(k.siteId, k.when), k.dimension, k.value, 'visitors', 1);

  const writes: Write[] = [
    ...store(taken, sessions),
    ...sessionWrites(touched),
    ...(seenWrite ? [seenWrite] : []),
    ...rollupWrite('analytics_hourly', rollup.hourly()),
    ...rollupWrite('analytics_daily', rollup.daily()),
    ...rollupWrite('analytics_monthly', rollup.monthly()),
    ['counted', sql`insert into ingest_drained (buffer, items) values (${name}, ${taken.length})
      on conflict (buffer) do update set items = ingest_drained.items + excluded.items`],
  ];
  // Every data-modifying CTE runs once, whether read or not; they touch different rows, so the one snapshot they share is enough.
  await sql`with ${sql.join(writes.map(([n, w]) => sql`${sql.ref(n)} as (${w})`))} select 1`.execute(tx);
}
