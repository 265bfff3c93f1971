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
/** A session's entry values (`analytics_sessions.entry`). */
export type Entry = Record<SessionDimension | 'path', string>;

/** An event as the drain takes it from `analytics_buffer` (bigints and props as text). */
export interface TakenEvent {
  seq: number;
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
  props: string | null;
  visitor: string;
  interactive: boolean;
}

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
  before: { lastAt: Date; pageviews: number; interactiveEvents: number } | null;
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
export function entryOf(e: TakenEvent): Entry {
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
export const isPageview = (e: TakenEvent): boolean => e.name === 'pageview';

/**
 * Assigns each event (sorted by time) a session: the visitor's open one when
 * its last event is at most 30 minutes before, else a new one whose entry is
 * this event. `open` holds each visitor's latest stored session (its
 * `before` a copy of what is stored) and is updated. Returns each event's session and the sessions the batch touched.
 */
export function assignSessions(events: TakenEvent[], open: Map<string, Session>, newId: () => string): { sessionOf: Session[]; touched: Session[] } {
  const sessionOf: Session[] = [];
  const touched = new Set<Session>();
  for (const e of events) {
    const key = sessionKey(e.site_id, e.visitor);
    let s = open.get(key);
    if (!s || e.at.getTime() - s.lastAt.getTime() > SESSION_GAP_MS) {
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

/** The pairs a session's visit counts under: the totals, its entry page, its entry values. */
export function sessionValues(s: Session): [string, string][] {
  return [['', ''], ['path', s.entry.path], ...SESSION_DIMENSIONS.map((d) => [d, s.entry[d]] as [string, string])];
}

/** The pairs an event counts under: the totals, its page, its session's values, and for a custom event its name; then its props. */
export function eventValues(e: TakenEvent, s: Session): { pairs: [string, string][]; props: [string, string][] } {
  const pairs: [string, string][] = [['', ''], ['path', bounded(e.pathname)], ...SESSION_DIMENSIONS.map((d) => [d, s.entry[d]] as [string, string])];
  if (!isPageview(e)) pairs.push(['event', bounded(e.name)]);
  const props: [string, string][] = [];
  if (e.props) {
    for (const [k, v] of Object.entries(JSON.parse(e.props) as Record<string, string>)) {
      props.push(['prop', bounded(`${e.name}${PROP_SEPARATOR}${k}${PROP_SEPARATOR}${v}`)]);
    }
  }
  return { pairs, props };
}

/** Counters of a roll-up row. */
export interface Counts { visitors: number; pageviews: number; events: number; visits: number; bounces: number; duration_s: number }
export type Metric = keyof Counts;

/** A roll-up row's key and the deltas the batch adds to it. */
export interface RollupRow { siteId: string; at: Date | string; dimension: string; value: string; c: Counts }

const HOUR = 3600_000;
const hourOf = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR) * HOUR);
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

/** The deltas of one batch, per (site, hour or day, dimension, value). */
export class Rollup {
  readonly hourly = new Map<string, RollupRow>();
  readonly daily = new Map<string, RollupRow>();

  /** Adds `n` to `metric` of the rows of `at`'s hour and day. */
  add(siteId: string, at: Date, dimension: string, value: string, metric: Metric, n: number): void {
    if (n === 0) return;
    const hour = hourOf(at);
    const day = dayOf(at);
    for (const [map, unit, unitKey] of [[this.hourly, hour, String(hour.getTime())], [this.daily, day, day]] as const) {
      const key = `${siteId}\u0000${unitKey}\u0000${dimension}\u0000${value}`;
      let row = map.get(key);
      if (!row) {
        row = { siteId, at: unit, dimension, value, c: { visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 } };
        map.set(key, row);
      }
      row.c[metric] += n;
    }
  }

  /** A session's visit, bounce and duration changes, under its entry values at its start. */
  addSession(s: Session): void {
    const before = s.before;
    const visits = before ? 0 : 1;
    const bounces = bounce(s) - (before ? bounce(before) : 0);
    const secs = duration(s.startedAt, s) - (before ? duration(s.startedAt, before) : 0);
    if (visits === 0 && bounces === 0 && secs === 0) return;
    for (const [d, v] of sessionValues(s)) {
      this.add(s.siteId, s.startedAt, d, v, 'visits', visits);
      this.add(s.siteId, s.startedAt, d, v, 'bounces', bounces);
      this.add(s.siteId, s.startedAt, d, v, 'duration_s', secs);
    }
  }
}
