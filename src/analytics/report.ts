/**
 * A site's figures over a window of whole UTC days (GET /analytics/{id}),
 * read from the roll-ups only (docs/analytics.md, "Roll-up rows"): the
 * totals row per day for the series, and per requested dimension one
 * aggregate over the whole months of the window (`analytics_monthly`) and
 * the days of its partial months (`analytics_daily`), each an index range of
 * `(site_id, dimension, period)`. The queries run side by side, so a year
 * with every dimension costs about the slowest of them.
 */
import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import type { Services } from '../pipeline/context';
import { ApiError } from '../pipeline/errors';
import { PROP_SEPARATOR } from './count';
import { getSite } from './sites';

/** The dimensions a report can break figures down by (docs/analytics.md, "Dimensions"). */
export const DIMENSIONS = [
  'path', 'referrer', 'country', 'browser', 'os', 'device', 'utm_source', 'utm_medium', 'utm_campaign', 'event',
] as const;
/** One breakdown dimension. */
export type Dimension = (typeof DIMENSIONS)[number];
const isDimension = (name: string): name is Dimension => (DIMENSIONS as readonly string[]).includes(name);
/** The roll-up dimension of custom event properties (`<event>`, key and value joined by PROP_SEPARATOR). */
const PROP_DIMENSION = 'prop';

/** Days of a window when none is asked; the window is clamped to 1..MAX_DAYS. */
export const DEFAULT_DAYS = 7;
export const MAX_DAYS = 365;
/** Rows per breakdown, and values per property key of an event. */
export const TOP_ROWS = 50;
export const TOP_PROP_VALUES = 10;

/** The window in days: default 7, clamped to 1..365, never refused. */
export function clampDays(days: number | undefined): number {
  if (days === undefined || !Number.isFinite(days)) return DEFAULT_DAYS;
  return Math.min(MAX_DAYS, Math.max(1, Math.trunc(days)));
}

/** The dimensions of a comma list, each once in the order first named; an unknown one is 400 naming it. */
export function parseDimensions(list: string | undefined): Dimension[] {
  const out: Dimension[] = [];
  for (const raw of (list ?? '').split(',')) {
    const d = raw.trim().toLowerCase();
    if (!d) continue;
    if (!isDimension(d)) {
      const reason = `unknown dimension "${raw.trim()}"; one of ${DIMENSIONS.join(', ')}`;
      throw new ApiError(400, 'unknown_dimension', `Invalid dimensions: ${reason}.`, { field: 'dimensions', dimension: raw.trim() }, [{ field: 'dimensions', reason }]);
    }
    if (!out.includes(d)) out.push(d);
  }
  return out;
}

/** `YYYY-MM-DD` of the UTC day `offset` days after the one `at` falls on. */
function utcDay(at: Date, offset = 0): string {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + offset)).toISOString().slice(0, 10);
}

type Sums = { visitors: number; pageviews: number; events: number; visits: number; bounces: number; duration_s: number };

const SUMS = sql`sum(visitors)::bigint as visitors, sum(pageviews)::bigint as pageviews, sum(events)::bigint as events,
  sum(visits)::bigint as visits, sum(bounces)::bigint as bounces, sum(duration_s)::bigint as duration_s`;

/** Bounce rate and mean duration of `visits` visits (null without any). */
function visitFigures(s: Sums) {
  const visits = Number(s.visits);
  return {
    bounceRate: visits ? (100 * Number(s.bounces)) / visits : null,
    visitDurationSeconds: visits ? Number(s.duration_s) / visits : null,
  };
}

/** A report's window; `openEnd`: nothing is counted after `to` (it is today). */
interface Window { siteId: string; from: string; to: string; openEnd: boolean }

/** The totals row of every day of the window that has one. */
async function dailyTotals(db: Db, w: Window) {
  const { rows } = await sql<Sums & { day: string }>`
    select day, visitors, pageviews, events, visits, bounces, duration_s from analytics_daily
    where site_id = ${w.siteId} and dimension = '' and day between ${w.from}::date and ${w.to}::date and value = ''`.execute(db);
  return rows;
}

/** The first day of the month after the one `day` (`YYYY-MM-DD`) falls in. */
function nextMonth(day: string): string {
  const d = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString().slice(0, 10);
}
const dayBefore = (day: string) => utcDay(new Date(`${day}T00:00:00Z`), -1);
const dayAfter = (day: string) => utcDay(new Date(`${day}T00:00:00Z`), 1);

/** The roll-up rows a window is summed from: whole months, plus days, minus days. */
export interface Periods {
  /** First days of the first and last month read from `analytics_monthly` (null: none). */
  months: [string, string] | null;
  /** Day ranges (inclusive) read from `analytics_daily` and added. */
  days: [string, string][];
  /** A day range read from `analytics_daily` and subtracted: the days of the first month before the window. */
  minus: [string, string] | null;
}

/**
 * How to sum the window `from`..`to` (inclusive UTC days) with the fewest
 * rows. A month inside the window is its monthly row. When nothing is
 * counted after `to` (`openEnd`: the window ends today), the month of `to`
 * is its monthly row too (month to date). The first month, when the window
 * starts inside it, is its days in the window, or its monthly row minus its
 * days before the window when those are fewer. Every day of the window is
 * counted exactly once.
 */
export function windowPeriods(from: string, to: string, openEnd = false): Periods {
  const startOf = (day: string) => `${day.slice(0, 7)}-01`;
  // Months before `end` (exclusive) that the window reaches the end of are whole.
  const end = openEnd || dayAfter(to).endsWith('-01') ? nextMonth(to) : startOf(to);
  const days: [string, string][] = [];
  let minus: [string, string] | null = null;
  let first = from;
  if (!from.endsWith('-01')) {
    // The window starts inside a month; one that is not whole either is summed from its days alone.
    if (startOf(from) >= end) return { months: null, days: [[from, to]], minus: null };
    const last = dayBefore(nextMonth(from)) < to ? dayBefore(nextMonth(from)) : to;
    if (dayDiff(startOf(from), from) < dayDiff(from, last) + 1) {
      minus = [startOf(from), dayBefore(from)];
      first = startOf(from);
    } else {
      days.push([from, last]);
      first = nextMonth(from);
    }
  }
  if (end <= to) days.push([end, to]);
  return { months: first < end ? [first, startOf(dayBefore(end))] : null, days, minus };
}

/** Days from `a` to `b` (`YYYY-MM-DD`). */
const dayDiff = (a: string, b: string) => (Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000;

const METRICS = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'] as const;

/** The roll-up rows of `dimension` over the window, as a row source with `value` and the metrics (subtracted rows negated). */
function rollupRows(w: Window, dimension: string) {
  const { months, days, minus } = windowPeriods(w.from, w.to, w.openEnd);
  const metrics = (sign: string) => sql.raw(`value, ${METRICS.map((m) => `${sign}${m} as ${m}`).join(', ')}`);
  const daily = ([a, b]: [string, string], sign = '') => sql`select ${metrics(sign)} from analytics_daily
    where site_id = ${w.siteId} and dimension = ${dimension} and day between ${a}::date and ${b}::date`;
  const parts = days.map((r) => daily(r));
  if (minus) parts.push(daily(minus, '-'));
  if (months) {
    parts.push(sql`select ${metrics('')} from analytics_monthly
      where site_id = ${w.siteId} and dimension = ${dimension} and month between ${months[0]}::date and ${months[1]}::date`);
  }
  return sql`(${sql.join(parts, sql` union all `)})`;
}

/** Leaves out values whose window sums are all zero (what a subtracted month leaves of values seen only before the window). */
const NOT_ALL_ZERO = sql.raw(`having ${METRICS.map((m) => `sum(${m}) <> 0`).join(' or ')}`);

/** The top values of `dimension` over the window: most visitors first, then pageviews (for events, occurrences). */
async function breakdown(db: Db, w: Window, dimension: Dimension) {
  const next = dimension === 'event' ? sql`events` : sql`pageviews`;
  const { rows } = await sql<Sums & { value: string }>`
    select value, ${SUMS} from ${rollupRows(w, dimension)} r
    group by value ${NOT_ALL_ZERO} order by visitors desc, ${next} desc, value limit ${TOP_ROWS}`.execute(db);
  const withProps = dimension === 'event' ? await eventProps(db, w, rows.map((r) => r.value)) : null;
  return {
    dimension,
    rows: rows.map((r) => ({
      value: r.value,
      visitors: Number(r.visitors),
      pageviews: Number(dimension === 'event' ? r.events : r.pageviews),
      // `event` is not a visit's value: no visits are counted under it.
      ...(dimension !== 'event' ? { visits: Number(r.visits), ...visitFigures(r) } : { visits: null, bounceRate: null, visitDurationSeconds: null }),
      ...(withProps ? { props: withProps.get(r.value) ?? [] } : {}),
    })),
  };
}

type Prop = { key: string; value: string; events: number; visitors: number };

/** The properties of `events`: per key, its values with the most visitors (then occurrences), keys alphabetical. */
async function eventProps(db: Db, w: Window, events: string[]): Promise<Map<string, Prop[]>> {
  const out = new Map<string, Prop[]>();
  if (!events.length) return out;
  const { rows } = await sql<Prop & { event: string }>`
    select event, key, value, visitors, events from (
      select *, row_number() over (partition by event, key order by visitors desc, events desc, value) as rank from (
        select split_part(value, ${PROP_SEPARATOR}, 1) as event, split_part(value, ${PROP_SEPARATOR}, 2) as key,
          substr(value, length(split_part(value, ${PROP_SEPARATOR}, 1)) + length(split_part(value, ${PROP_SEPARATOR}, 2)) + 3) as value,
          sum(visitors)::bigint as visitors, sum(events)::bigint as events
        from ${rollupRows(w, PROP_DIMENSION)} r
        where split_part(r.value, ${PROP_SEPARATOR}, 1) = any(${events}::text[])
        group by r.value ${NOT_ALL_ZERO}
      ) p
    ) ranked where rank <= ${TOP_PROP_VALUES} order by event, key, rank`.execute(db);
  for (const r of rows) {
    const list = out.get(r.event) ?? [];
    list.push({ key: r.key, value: r.value, events: Number(r.events), visitors: Number(r.visitors) });
    out.set(r.event, list);
  }
  return out;
}

/**
 * GET /analytics/{id}: the site with its totals, a series with every day of
 * the window (zeros included) and a breakdown per dimension, in the order
 * asked. Visitors are daily uniques summed (`dailyUniqueVisitors`).
 */
export async function siteReport(db: Db, services: Pick<Services, 'baseUrl'>, caller: Caller, id: string,
  query: { days?: number; dimensions?: string }, now: Date) {
  const dimensions = parseDimensions(query.dimensions);
  const days = clampDays(query.days);
  const site = await getSite(db, services, caller, id, now);
  const w: Window = { siteId: id, from: utcDay(now, 1 - days), to: utcDay(now), openEnd: true };
  const [totals, breakdowns] = await Promise.all([dailyTotals(db, w), Promise.all(dimensions.map((d) => breakdown(db, w, d)))]);

  const byDay = new Map(totals.map((r) => [r.day, r]));
  const sum: Sums = { visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 };
  const series = Array.from({ length: days }, (_, i) => {
    const date = utcDay(now, i + 1 - days);
    const r = byDay.get(date);
    for (const k of Object.keys(sum) as (keyof Sums)[]) sum[k] += Number(r?.[k] ?? 0);
    return { date, visitors: Number(r?.visitors ?? 0), pageviews: Number(r?.pageviews ?? 0), visits: Number(r?.visits ?? 0) };
  });
  return {
    ...site, days,
    visitors: sum.visitors, dailyUniqueVisitors: sum.visitors, pageviews: sum.pageviews, events: sum.events, visits: sum.visits,
    ...visitFigures(sum),
    series, breakdowns,
  };
}
