/**
 * When maintenance windows are in force (spec: "Maintenance semantics"):
 * the pure rule arithmetic, with no database, so that the web app previews
 * the very occurrences the server will honour (web/src/lib/maintenance.ts).
 *
 * Rule classification. A rule is expanded only when it is exactly the subset
 * the contract names: `;`-separated `NAME=VALUE` parts (names and values
 * case-insensitive, surrounding whitespace ignored), `FREQ` DAILY, WEEKLY or
 * MONTHLY, and otherwise only INTERVAL, COUNT, UNTIL (not both COUNT and
 * UNTIL), WKST, and at most one of BYDAY (one weekday, no ordinal, the weekday
 * the window starts on in its timezone) or BYMONTHDAY (one day 1–31, the day
 * of month it starts on). Anything else (an `RRULE:` prefix, `DTSTART` or
 * other lines, a repeated part, YEARLY, BYSETPOS, lists, garbage) is not
 * expanded: the window is in force for its first occurrence only.
 *
 * Expansion. Occurrences start at the same local wall-clock time in the
 * window's own timezone. The rule is expanded by rrule over "floating" local
 * times (local components carried as if UTC) and each result is placed in the
 * zone with luxon. A local start that does not exist (spring-forward gap)
 * moves forward by the gap (02:30 → 03:30 summer time); an ambiguous one
 * (fall-back overlap) takes the earlier instant. Every occurrence lasts the
 * same absolute time as the first (`endsAt − startsAt`): a 2-hour window
 * starting 01:00 on the spring-forward day ends at 04:00 local, two real hours
 * later. So occurrences never shrink to nothing and their ends are ordered
 * like their starts. The stored [startsAt, endsAt) is always the first
 * occurrence, and COUNT counts it. UNTIL is inclusive (RFC 5545) of an
 * occurrence starting at it: `…Z` is an instant, a local date-time is
 * wall-clock in the zone, a bare date includes occurrences starting on that
 * local day.
 *
 * Cost: expansion walks occurrences from the start; rules without COUNT skip
 * whole periods ahead, so a long-running window costs the same as a new one.
 */
import { DateTime, IANAZone } from 'luxon';
import { RRule, type Frequency } from 'rrule';

/** The fields of a window that decide when it is in force. */
export interface WindowTiming {
  startsAt: Date;
  endsAt: Date;
  timezone: string;
  recurrenceRule: string | null;
}

/** One occurrence: in force from `startsAt` (inclusive) to `endsAt` (exclusive). */
export interface Occurrence { startsAt: Date; endsAt: Date }

const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const FREQS: Record<string, Frequency> = { DAILY: RRule.DAILY, WEEKLY: RRule.WEEKLY, MONTHLY: RRule.MONTHLY };
const PARTS = new Set(['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY', 'BYMONTHDAY', 'WKST']);
const DAY = 86_400_000;

type Until = { kind: 'instant' | 'local'; ms: number };

/** The expandable part of a rule, before it is checked against the window's start. */
interface Rule {
  freq: string; interval: number; count: number | null; until: Until | null;
  byday: number | null; bymonthday: number | null; wkst: number | null;
}

function parseUntil(v: string): Until | null {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?$/.exec(v);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => (x === undefined ? 0 : Number(x)));
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return null;
  if (m[4] === undefined) return { kind: 'local', ms: ms + DAY - 1 }; // the whole local day
  return { kind: m[7] ? 'instant' : 'local', ms };
}

/** Parses the supported subset; null for anything else. */
function parseRule(text: string | null): Rule | null {
  if (!text) return null;
  const parts = new Map<string, string>();
  for (const part of text.trim().split(';')) {
    const m = /^([A-Za-z]+)=([A-Za-z0-9]+)$/.exec(part);
    if (!m) return null;
    const name = m[1].toUpperCase();
    if (!PARTS.has(name) || parts.has(name)) return null;
    parts.set(name, m[2].toUpperCase());
  }
  const get = (n: string) => parts.get(n);
  const freq = get('FREQ');
  if (!freq || !(freq in FREQS)) return null;
  const int = (v: string | undefined, max: number) => (v !== undefined && /^\d{1,7}$/.test(v) && +v >= 1 && +v <= max ? +v : null);
  const interval = get('INTERVAL') === undefined ? 1 : int(get('INTERVAL'), 10_000);
  // COUNT is walked occurrence by occurrence: above 5,000 the rule is not expanded (first occurrence only).
  const count = get('COUNT') === undefined ? null : int(get('COUNT'), 5_000);
  const until = get('UNTIL') === undefined ? null : parseUntil(get('UNTIL')!);
  const wkst = get('WKST') === undefined ? null : WEEKDAYS.indexOf(get('WKST')!);
  const byday = get('BYDAY') === undefined ? null : WEEKDAYS.indexOf(get('BYDAY')!);
  const bymonthday = get('BYMONTHDAY') === undefined ? null : int(get('BYMONTHDAY'), 31);
  if (interval === null || wkst === -1 || byday === -1) return null;
  if ((get('COUNT') !== undefined && count === null) || (get('UNTIL') !== undefined && until === null)) return null;
  if (get('BYMONTHDAY') !== undefined && bymonthday === null) return null;
  if ((count !== null && until !== null) || (byday !== null && bymonthday !== null)) return null;
  return { freq, interval, count, until, byday, bymonthday, wkst };
}

/** The window's start as local wall-clock time in its zone, or null for an unknown zone. */
function localStart(w: WindowTiming): DateTime | null {
  if (!IANAZone.isValidZone(w.timezone)) return null;
  const dt = DateTime.fromJSDate(w.startsAt, { zone: w.timezone });
  return dt.isValid ? dt : null;
}

/** The rule when `w` is expanded, else null. */
function expandableRule(w: WindowTiming): { rule: Rule; local: DateTime } | null {
  const rule = parseRule(w.recurrenceRule);
  const local = localStart(w);
  if (!rule || !local || !(w.endsAt.getTime() > w.startsAt.getTime())) return null;
  if (rule.byday !== null && rule.byday !== local.weekday - 1) return null;
  if (rule.bymonthday !== null && rule.bymonthday !== local.day) return null;
  return { rule, local };
}

/**
 * True when the window's recurrence rule is in the expanded subset (see the
 * module comment) for its start and timezone; false for a one-off window and
 * for rules that only cover the first occurrence.
 */
export function isExpandable(w: WindowTiming): boolean {
  return expandableRule(w) !== null;
}

/** The instant a floating local time (components carried as UTC) names in `zone`: the earlier one when ambiguous. */
function placeInZone(floating: number, zone: string): number {
  const f = new Date(floating);
  const dt = DateTime.fromObject({
    year: f.getUTCFullYear(), month: f.getUTCMonth() + 1, day: f.getUTCDate(),
    hour: f.getUTCHours(), minute: f.getUTCMinutes(), second: f.getUTCSeconds(), millisecond: f.getUTCMilliseconds(),
  }, { zone });
  return Math.min(...dt.getPossibleOffsets().map((d) => d.toMillis()), dt.toMillis());
}

/** Local components of an instant, carried as UTC. */
function floatingOf(ms: number, zone: string): number {
  const l = DateTime.fromMillis(ms, { zone });
  return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second, l.millisecond);
}

/**
 * Calls `visit` with each occurrence in order until it returns false. `from`
 * lets rules without COUNT skip periods that end before that instant.
 */
function walk(w: WindowTiming, from: Date | null, visit: (o: Occurrence) => boolean): void {
  const first: Occurrence = { startsAt: w.startsAt, endsAt: w.endsAt };
  const x = expandableRule(w);
  if (!x) { visit(first); return; }
  const { rule, local } = x;
  const zone = w.timezone;
  const duration = w.endsAt.getTime() - w.startsAt.getTime();
  const start = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  const ms = local.millisecond; // rrule works in whole seconds
  let dtstart = start;
  let bymonthday = rule.bymonthday;
  if (from && rule.count === null) {
    // Whole periods before the first one that can matter (margin: the duration plus two days of zone offsets).
    const lo = floatingOf(from.getTime(), zone) - duration - 2 * DAY;
    if (rule.freq === 'MONTHLY') {
      const l = new Date(lo);
      const months = (l.getUTCFullYear() - local.year) * 12 + l.getUTCMonth() - (local.month - 1);
      const k = Math.floor(months / rule.interval);
      if (k > 0) {
        dtstart = Date.UTC(local.year, local.month - 1 + k * rule.interval, 1, local.hour, local.minute, local.second);
        if (rule.byday === null) bymonthday = local.day;
      }
    } else {
      const period = rule.interval * (rule.freq === 'WEEKLY' ? 7 : 1) * DAY;
      const k = Math.floor((lo - start) / period);
      if (k > 0) dtstart = start + k * period;
    }
  }
  const localUntil = rule.until?.kind === 'local' ? rule.until.ms : null;
  const instantUntil = rule.until?.kind === 'instant' ? rule.until.ms : null;
  const rr = new RRule({
    freq: FREQS[rule.freq], interval: rule.interval, count: rule.count, dtstart: new Date(dtstart),
    until: localUntil !== null ? new Date(localUntil - ms) : instantUntil !== null ? new Date(floatingOf(instantUntil, zone) + DAY) : null,
    byweekday: rule.byday !== null ? [rule.byday] : null, bymonthday: bymonthday !== null ? [bymonthday] : null,
    wkst: rule.wkst ?? RRule.MO.weekday,
  }, true);
  // The stored first occurrence always counts, even when UNTIL lies before it.
  if (dtstart === start && !visit(first)) return;
  rr.all((d) => {
    const floating = d.getTime() + ms;
    if (floating === start + ms) return true;
    const s = placeInZone(floating, zone);
    if (instantUntil !== null && s > instantUntil) return false;
    return visit({ startsAt: new Date(s), endsAt: new Date(s + duration) });
  });
}

/** The occurrences of `w` that overlap [from, to), in order. */
export function occurrences(w: WindowTiming, from: Date, to: Date): Occurrence[] {
  const out: Occurrence[] = [];
  walk(w, from, (o) => {
    if (o.startsAt >= to) return false;
    if (o.endsAt > from) out.push(o);
    return true;
  });
  return out;
}

/** The occurrence in progress at `at`, else the next one; null when none is ahead. */
export function nextOccurrence(w: WindowTiming, at: Date): Occurrence | null {
  let found: Occurrence | null = null;
  walk(w, at, (o) => {
    if (o.endsAt <= at) return true;
    found = o;
    return false;
  });
  return found as Occurrence | null;
}

/** The occurrence covering `at` (start inclusive, end exclusive), or null. */
export function activeOccurrence(w: WindowTiming, at: Date): Occurrence | null {
  const next = nextOccurrence(w, at);
  return next && next.startsAt <= at ? next : null;
}

/** The latest occurrence that ended at or before `at`, or null. */
export function lastOccurrence(w: WindowTiming, at: Date): Occurrence | null {
  let last: Occurrence | null = null;
  walk(w, null, (o) => {
    if (o.endsAt > at) return false;
    last = o;
    return true;
  });
  return last as Occurrence | null;
}

/** The first `n` occurrences in progress at `at` or starting after it. */
export function upcomingOccurrences(w: WindowTiming, at: Date, n: number): Occurrence[] {
  const out: Occurrence[] = [];
  walk(w, at, (o) => {
    if (o.endsAt > at) out.push(o);
    return out.length < n;
  });
  return out;
}
