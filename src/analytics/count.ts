/**
 * How a batch of buffered events counts (docs/analytics.md), without I/O:
 * sessions assigned in time order, the (dimension, value) pairs each event
 * falls under, which visitor keys need an `analytics_seen` check, and the
 * roll-up deltas (hourly and daily) the batch adds. The drain (drain.ts)
 * reads and writes around it.
 */

/** A visit ends after this long without an event. */
export const SESSION_GAP_MS = 30 * 60_000;
/** The value of a missing dimension. */
export const NONE = '(none)';
/** Separates event name, prop key and prop value in a `prop` roll-up value (no key or name contains it). */
export const PROP_SEPARATOR = '\u001f';
/** Roll-up and seen values are cut to this many bytes, so every key fits a btree index entry. */
export const MAX_VALUE_BYTES = 2000;

/** Dimensions a session's entry event fixes. */
export const SESSION_DIMENSIONS = ['referrer', 'country', 'browser', 'os', 'device', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
export type SessionDimension = typeof SESSION_DIMENSIONS[number];
/** Every `dimension` a roll-up row has: '' for the totals, the event's own (path, event, prop) and the session's. */
export const ROLLUP_DIMENSIONS: readonly string[] = ['', 'path', 'event', 'prop', ...SESSION_DIMENSIONS];
/** A session's entry values (`analytics_sessions.entry`). */
export type Entry = Record<SessionDimension | 'path', string>;

/** An event as ingestion appends it to `analytics_buffer`: parsed and hashed (no IP, no user agent; the visitor's bigint as text). */
export interface BufferedEvent {
  site_id: string;
  at: Date;
  name: string;
  pathname: string;
  hostname: string;
  referrer: string | null;
  referrer_source: string | null;
  country: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  props: Record<string, string> | null;
  visitor: string;
  interactive: boolean;
  /** In the first 30 minutes of a UTC day, the visitor's hash under the day before's salt (else null): a visit under way at midnight continues. */
  previous_visitor: string | null;
}

/**
 * An event as counting reads it: taken from the buffer by the drain (props
 * as JSON text; the rest moves to `analytics_events` inside the database),
 * or handed over whole by ingestion (props as an object).
 */
export interface CountedEvent extends Omit<BufferedEvent, 'hostname' | 'referrer' | 'props'> { props: string | Record<string, string> | null }
/** An event as the drain takes it from `analytics_buffer`. */
export interface TakenEvent extends CountedEvent { seq: number; props: string | null }

/** A session as the batch leaves it, and as it was before (null: started in this batch). */
export interface Session {
  siteId: string;
  visitor: string;
  id: string;
  startedAt: Date;
  lastAt: Date;
  pageviews: number;
  interactiveEvents: number;
  entry: Entry;
  before: { lastAt: Date; pageviews: number; interactiveEvents: number; visitor: string } | null;
}

/** A value cut to MAX_VALUE_BYTES of UTF-8 (never inside a character). */
export function bounded(v: string): string {
  if (v.length * 3 <= MAX_VALUE_BYTES) return v;
  const b = Buffer.from(v, 'utf8');
  if (b.length <= MAX_VALUE_BYTES) return v;
  let end = MAX_VALUE_BYTES;
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString('utf8');
}

const orNone = (v: string | null): string => (v === null || v === '' ? NONE : bounded(v));

/** The session dimensions an entry event fixes. */
export function entryOf(e: CountedEvent): Entry {
  return {
    path: bounded(e.pathname),
    referrer: orNone(e.referrer_source),
    country: orNone(e.country),
    browser: orNone(e.browser),
    os: orNone(e.os),
    device: orNone(e.device),
    utm_source: orNone(e.utm_source),
    utm_medium: orNone(e.utm_medium),
    utm_campaign: orNone(e.utm_campaign),
  };
}

export const sessionKey = (siteId: string, visitor: string): string => `${siteId}\u0000${visitor}`;
export const isPageview = (e: CountedEvent): boolean => e.name === 'pageview';

/**
 * Assigns each event (sorted by time) a session: the visitor's open one when
 * its last event is at most 30 minutes before, else a new one whose entry is
 * this event. `open` holds each visitor's latest stored session (its
 * `before` a copy of what is stored, with the visitor its row has) and is
 * updated. A visitor with no open session under today's hash continues the
 * one of its hash under yesterday's salt (`previous_visitor`), which is
 * then known by today's (its row's visitor changes when written). Returns
 * each event's session and the sessions the batch touched.
 */
export function assignSessions(events: CountedEvent[], open: Map<string, Session>, newId: () => string): { sessionOf: Session[]; touched: Session[] } {
  const sessionOf: Session[] = [];
  const touched = new Set<Session>();
  const within = (s: Session | undefined, e: CountedEvent): s is Session => s !== undefined && e.at.getTime() - s.lastAt.getTime() <= SESSION_GAP_MS;
  for (const e of events) {
    const key = sessionKey(e.site_id, e.visitor);
    let s = open.get(key);
    if (!within(s, e) && e.previous_visitor !== null) {
      const before = sessionKey(e.site_id, e.previous_visitor);
      const last = open.get(before);
      if (within(last, e)) {
        open.delete(before);
        last.visitor = e.visitor;
        open.set(key, (s = last));
      }
    }
    if (!within(s, e)) {
      s = { siteId: e.site_id, visitor: e.visitor, id: newId(), startedAt: e.at, lastAt: e.at, pageviews: 0, interactiveEvents: 0, entry: entryOf(e), before: null };
      open.set(key, s);
    }
    touched.add(s);
    if (e.at > s.lastAt) s.lastAt = e.at;
    if (isPageview(e)) s.pageviews++;
    else if (e.interactive) s.interactiveEvents++;
    sessionOf.push(s);
  }
  return { sessionOf, touched: [...touched] };
}

/** A bounce: one pageview and no interactive custom event. */
const bounce = (s: { pageviews: number; interactiveEvents: number }): number => (s.pageviews === 1 && s.interactiveEvents === 0 ? 1 : 0);
/** Visit duration in seconds: first to last event; a bounce lasts 0 s. */
const duration = (startedAt: Date, s: { lastAt: Date; pageviews: number; interactiveEvents: number }): number =>
  (bounce(s) ? 0 : Math.floor((s.lastAt.getTime() - startedAt.getTime()) / 1000));

const sessionPairCache = new WeakMap<Session, [string, string][]>();

/** The pairs fixed for a whole session: the totals and its entry values (its events' pages are their own). */
export function sessionPairs(s: Session): [string, string][] {
  let pairs = sessionPairCache.get(s);
  if (!pairs) sessionPairCache.set(s, (pairs = [['', ''], ...SESSION_DIMENSIONS.map((d) => [d, s.entry[d]] as [string, string])]));
  return pairs;
}

/** The pairs of an event itself: its page, for a custom event its name, and its props (`prop`, name, key and value joined). */
export function ownPairs(e: CountedEvent): [string, string][] {
  const pairs: [string, string][] = [['path', bounded(e.pathname)]];
  if (!isPageview(e)) pairs.push(['event', bounded(e.name)]);
  if (e.props) {
    const props = typeof e.props === 'string' ? (JSON.parse(e.props) as Record<string, string>) : e.props;
    for (const [k, v] of Object.entries(props)) {
      pairs.push(['prop', bounded(`${e.name}${PROP_SEPARATOR}${k}${PROP_SEPARATOR}${v}`)]);
    }
  }
  return pairs;
}

/** Counters of a roll-up row. */
export interface Counts { visitors: number; pageviews: number; events: number; visits: number; bounces: number; duration_s: number }
export type Metric = keyof Counts;
const METRICS: Metric[] = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'];

/** A roll-up row's key and the deltas the batch adds to it. */
export interface RollupRow { siteId: string; at: Date | string; dimension: string; value: string; c: Counts }

const HOUR = 3600_000;
/** Hours met lately, so an event's `When` is looked up rather than made. */
const hours = new Map<number, When>();

/** The hour (epoch ms) and UTC day (`YYYY-MM-DD`) an instant falls in: one object per hour, shared. */
export interface When { readonly hour: number; readonly day: string }

export function whenOf(at: Date | number): When {
  const ms = typeof at === 'number' ? at : at.getTime();
  const hour = Math.floor(ms / HOUR) * HOUR;
  let w = hours.get(hour);
  if (!w) {
    if (hours.size > 10_000) hours.clear();
    hours.set(hour, (w = { hour, day: new Date(hour).toISOString().slice(0, 10) }));
  }
  return w;
}

const zero = (): Counts => ({ visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 });

/** A (site, hour) of the roll-up and its rows by dimension and value. */
export interface Bucket { siteId: string; when: When; dims: Map<string, Map<string, RollupRow>> }

/** The deltas of one batch per (site, hour, dimension, value); the daily rows are their sums. */
export class Rollup {
  private readonly buckets = new Map<string, Map<number, Bucket>>();

  /** The bucket of `siteId` at `when`'s hour. */
  bucket(siteId: string, when: When): Bucket {
    let bySite = this.buckets.get(siteId);
    if (!bySite) this.buckets.set(siteId, (bySite = new Map()));
    let b = bySite.get(when.hour);
    if (!b) bySite.set(when.hour, (b = { siteId, when, dims: new Map() }));
    return b;
  }

  private row(b: Bucket, dimension: string, value: string): Counts {
    let values = b.dims.get(dimension);
    if (!values) b.dims.set(dimension, (values = new Map()));
    let r = values.get(value);
    if (!r) values.set(value, (r = { siteId: b.siteId, at: new Date(b.when.hour), dimension, value, c: zero() }));
    return r.c;
  }

  /** Adds `n` to `metric` of a row. */
  add(b: Bucket, dimension: string, value: string, metric: Metric, n: number): void {
    if (n !== 0) this.row(b, dimension, value)[metric] += n;
  }

  /** Adds several metrics to a row at once. */
  addCounts(b: Bucket, dimension: string, value: string, counts: Partial<Counts>): void {
    const c = this.row(b, dimension, value);
    for (const m of METRICS) c[m] += counts[m] ?? 0;
  }

  /** A session's visit, bounce and duration changes, under its entry values (and entry page) at its start. */
  addSession(s: Session): void {
    const before = s.before;
    const visits = before ? 0 : 1;
    const bounces = bounce(s) - (before ? bounce(before) : 0);
    const secs = duration(s.startedAt, s) - (before ? duration(s.startedAt, before) : 0);
    if (visits === 0 && bounces === 0 && secs === 0) return;
    const b = this.bucket(s.siteId, whenOf(s.startedAt));
    const counts = { visits, bounces, duration_s: secs };
    for (const [d, v] of sessionPairs(s)) this.addCounts(b, d, v, counts);
    this.addCounts(b, 'path', s.entry.path, counts);
  }

  /** The hourly rows. */
  hourly(): RollupRow[] {
    const out: RollupRow[] = [];
    for (const bySite of this.buckets.values()) for (const b of bySite.values()) for (const values of b.dims.values()) out.push(...values.values());
    return out;
  }

  /** The daily rows: the hourly ones summed per UTC day. */
  daily(): RollupRow[] {
    return this.summed((day) => day);
  }

  /** The monthly rows: the hourly ones summed per UTC month (`at` is the month's first day). */
  monthly(): RollupRow[] {
    return this.summed((day) => `${day.slice(0, 7)}-01`);
  }

  /** The hourly rows summed per period, the period of a UTC day `YYYY-MM-DD` named by `period`. */
  private summed(period: (day: string) => string): RollupRow[] {
    const out = new Map<string, RollupRow>();
    for (const bySite of this.buckets.values()) {
      for (const b of bySite.values()) {
        const at = period(b.when.day);
        for (const values of b.dims.values()) {
          for (const r of values.values()) {
            const key = `${r.siteId}\u0000${at}\u0000${r.dimension}\u0000${r.value}`;
            let d = out.get(key);
            if (!d) out.set(key, (d = { siteId: r.siteId, at, dimension: r.dimension, value: r.value, c: zero() }));
            for (const m of METRICS) d.c[m] += r.c[m];
          }
        }
      }
    }
    return [...out.values()];
  }
}
