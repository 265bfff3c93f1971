/**
 * A maintenance form's schedule → the windows to create, and their preview.
 *
 * The start and end are typed as wall-clock times in the window's own time
 * zone (a window repeats at the same local time there), then sent as RFC 3339
 * with that zone's offset. The server repeats only a subset of rules (spec:
 * "Maintenance semantics"), and a weekly rule only on the weekday the window
 * starts: "weekly on Tuesday and Thursday" is therefore saved as one window per
 * day, each starting on its own weekday. The preview uses the server's own
 * rule arithmetic (src/alerting/recurrence.ts), so it shows exactly the
 * occurrences during which alerts are silenced.
 */
import { DateTime } from 'luxon';
import { isExpandable, upcomingOccurrences, type Occurrence } from '../../../src/alerting/recurrence';

export type Repeat = 'none' | 'daily' | 'weekly' | 'monthly' | 'custom';

/** RRULE weekday codes in luxon's order (weekday 1 = Monday). */
export const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
export const WEEKDAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

export interface Schedule {
  start: string; end: string; timezone: string;
  repeat: Repeat; interval: string; days: string[]; until: string; custom: string;
}

/** One window to create: its first occurrence and its rule. */
export interface PlannedWindow { startsAt: string; endsAt: string; recurrenceRule: string | null }

export interface Plan {
  windows: PlannedWindow[];
  /** The rule as the person chose it (several weekdays in one), for the words. */
  words: string | null;
  /** A reason the schedule cannot be saved yet, said at the recurrence field. */
  problem: string | null;
  /** True when some rule is kept as written but silences alerts for its first occurrence only. */
  firstOnly: boolean;
}

/** A `datetime-local` value read in `zone` → RFC 3339 with the zone's offset; null when not a time. */
export function fromLocal(value: string, zone: string): string | null {
  if (!value) return null;
  const dt = DateTime.fromISO(value, { zone });
  return dt.isValid ? dt.toISO({ suppressMilliseconds: true }) : null;
}

/** An instant → a `datetime-local` value in `zone`. */
export function toLocal(iso: string, zone: string): string {
  const dt = DateTime.fromISO(iso, { zone });
  return dt.isValid ? dt.toFormat("yyyy-LL-dd'T'HH:mm") : '';
}


function parts(map: Array<[string, string | null]>): string {
  return map.filter(([, v]) => v !== null).map(([k, v]) => `${k}=${v}`).join(';');
}

/** The windows the schedule makes, or why it cannot be saved. Unreadable times are passed through for the server to refuse at their field. */
export function plan(s: Schedule): Plan {
  const startsAt = fromLocal(s.start, s.timezone) ?? s.start;
  const endsAt = fromLocal(s.end, s.timezone) ?? s.end;
  const none: Plan = { windows: [{ startsAt, endsAt, recurrenceRule: null }], words: null, problem: null, firstOnly: false };
  if (s.repeat === 'none') return none;
  if (s.repeat === 'custom') {
    const rule = s.custom.trim().replace(/^RRULE:/i, '');
    if (!rule) return { ...none, problem: 'Write a rule, such as FREQ=WEEKLY;INTERVAL=2;BYDAY=MO.' };
    const w = { startsAt, endsAt, recurrenceRule: rule };
    return { windows: [w], words: rule, problem: null, firstOnly: !expands(w, s.timezone) };
  }
  const n = Number(s.interval || '1');
  if (!Number.isInteger(n) || n < 1 || n > 10_000) return { ...none, problem: 'Repeat every 1 to 10,000 periods.' };
  const interval = n > 1 ? String(n) : null;
  const until = s.until ? s.until.replaceAll('-', '') : null;
  const freq = s.repeat.toUpperCase();
  if (s.repeat !== 'weekly') {
    const rule = parts([['FREQ', freq], ['INTERVAL', interval], ['UNTIL', until]]);
    const w = { startsAt, endsAt, recurrenceRule: rule };
    return { windows: [w], words: rule, problem: null, firstOnly: !expands(w, s.timezone) };
  }
  const first = DateTime.fromISO(startsAt, { zone: s.timezone });
  const last = DateTime.fromISO(endsAt, { zone: s.timezone });
  if (!first.isValid || !last.isValid) return { ...none, problem: 'Set the start and the end first.' };
  const ownDay = WEEKDAYS[first.weekday - 1];
  const days = WEEKDAYS.filter((d) => (s.days.length ? s.days : [ownDay]).includes(d));
  // Each chosen day gets a window whose first occurrence is the first such day on or after the start.
  const windows = days.map((d) => {
    const shift = (WEEKDAYS.indexOf(d) - (first.weekday - 1) + 7) % 7;
    return {
      startsAt: first.plus({ days: shift }).toISO({ suppressMilliseconds: true })!,
      endsAt: last.plus({ days: shift }).toISO({ suppressMilliseconds: true })!,
      recurrenceRule: parts([['FREQ', 'WEEKLY'], ['INTERVAL', interval], ['BYDAY', d], ['UNTIL', until]]),
    };
  }).sort((a, b) => Date.parse(a.startsAt) - Date.parse(b.startsAt));
  return {
    windows, words: parts([['FREQ', 'WEEKLY'], ['INTERVAL', interval], ['BYDAY', days.join(',')], ['UNTIL', until]]),
    problem: null, firstOnly: windows.some((w) => !expands(w, s.timezone)),
  };
}

function timing(w: PlannedWindow, zone: string) {
  return { startsAt: new Date(w.startsAt), endsAt: new Date(w.endsAt), timezone: zone, recurrenceRule: w.recurrenceRule };
}

function expands(w: PlannedWindow, zone: string): boolean {
  const t = timing(w, zone);
  return Number.isNaN(t.startsAt.getTime()) || Number.isNaN(t.endsAt.getTime()) || isExpandable(t);
}

/** The next `n` occurrences of all the planned windows (in progress or ahead of `now`), soonest first. */
export function preview(p: Plan, zone: string, n: number, now = new Date()): Occurrence[] {
  const all = p.windows.flatMap((w) => {
    const t = timing(w, zone);
    if (Number.isNaN(t.startsAt.getTime()) || Number.isNaN(t.endsAt.getTime()) || t.endsAt <= t.startsAt) return [];
    return upcomingOccurrences(t, now, n);
  });
  return all.sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime()).slice(0, n);
}

/** The form's schedule for a stored window: the rules this form writes come back as themselves, anything else as a custom rule. */
export function scheduleOf(w: { startsAt: string; endsAt: string; timezone: string; recurrenceRule: string | null }): Schedule {
  const base: Schedule = {
    start: toLocal(w.startsAt, w.timezone), end: toLocal(w.endsAt, w.timezone), timezone: w.timezone,
    repeat: 'none', interval: '1', days: [], until: '', custom: '',
  };
  if (!w.recurrenceRule) return base;
  const map = new Map<string, string>();
  for (const part of w.recurrenceRule.split(';')) {
    const [k, v] = part.split('=');
    if (!k || v === undefined || map.has(k)) return { ...base, repeat: 'custom', custom: w.recurrenceRule };
    map.set(k, v);
  }
  const freq = map.get('FREQ');
  const known = [...map.keys()].every((k) => ['FREQ', 'INTERVAL', 'BYDAY', 'UNTIL'].includes(k));
  const interval = map.get('INTERVAL') ?? '1';
  const until = map.get('UNTIL');
  const byday = map.get('BYDAY');
  const ok = known && /^\d+$/.test(interval) && (until === undefined || /^\d{8}$/.test(until))
    && (freq === 'WEEKLY' ? byday !== undefined && (WEEKDAYS as readonly string[]).includes(byday) : byday === undefined)
    && (freq === 'DAILY' || freq === 'WEEKLY' || freq === 'MONTHLY');
  if (!ok) return { ...base, repeat: 'custom', custom: w.recurrenceRule };
  return {
    ...base, repeat: freq.toLowerCase() as Repeat, interval, days: byday ? [byday] : [],
    until: until ? `${until.slice(0, 4)}-${until.slice(4, 6)}-${until.slice(6)}` : '',
  };
}
