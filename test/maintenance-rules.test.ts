/**
 * When maintenance windows are in force (src/alerting/maintenance.ts), pure:
 * recurrence at the same local time across DST changes, the expanded rule
 * subset, COUNT/UNTIL limits, rules that only cover the first occurrence, and
 * the edges of an occurrence (start inclusive, end exclusive).
 */
import { DateTime } from 'luxon';
import {
  activeOccurrence, isExpandable, lastOccurrence, nextOccurrence, occurrences, type Occurrence, type WindowTiming,
} from '../src/alerting/maintenance';

const HOUR = 3_600_000;

/** A window whose first occurrence starts at local `start` in `zone` and lasts `hours`. */
function win(start: string, zone: string, rule: string | null, hours = 1): WindowTiming {
  const s = DateTime.fromISO(start, { zone });
  return { startsAt: s.toJSDate(), endsAt: s.plus({ hours }).toJSDate(), timezone: zone, recurrenceRule: rule };
}

const starts = (os: Occurrence[]) => os.map((o) => o.startsAt.toISOString());
const local = (o: Occurrence, zone: string) => DateTime.fromJSDate(o.startsAt, { zone }).toFormat("yyyy-MM-dd HH:mm ZZ");
const span = (from: string, to: string) => [new Date(from), new Date(to)] as const;

describe('DAILY across DST changes', () => {
  it('Europe/Berlin spring forward (2026-03-29): 02:30 does not exist and moves to 03:30 CEST for that day', () => {
    const w = win('2026-03-27T02:30', 'Europe/Berlin', 'FREQ=DAILY');
    const os = occurrences(w, ...span('2026-03-27T00:00Z', '2026-03-31T00:00Z'));
    expect(os.map((o) => local(o, 'Europe/Berlin'))).toEqual([
      '2026-03-27 02:30 +01:00', '2026-03-28 02:30 +01:00', '2026-03-29 03:30 +02:00', '2026-03-30 02:30 +02:00',
    ]);
    expect(starts(os)).toEqual(['2026-03-27T01:30:00.000Z', '2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
    // The duration is absolute: one real hour on every day, the gap day too.
    for (const o of os) expect(o.endsAt.getTime() - o.startsAt.getTime()).toBe(HOUR);
  });

  it('Europe/Berlin fall back (2026-10-25): the ambiguous 02:30 takes the earlier instant (CEST)', () => {
    const w = win('2026-10-23T02:30', 'Europe/Berlin', 'FREQ=DAILY');
    const os = occurrences(w, ...span('2026-10-23T00:00Z', '2026-10-27T00:00Z'));
    expect(starts(os)).toEqual(['2026-10-23T00:30:00.000Z', '2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    expect(os.map((o) => local(o, 'Europe/Berlin'))).toEqual([
      '2026-10-23 02:30 +02:00', '2026-10-24 02:30 +02:00', '2026-10-25 02:30 +02:00', '2026-10-26 02:30 +01:00',
    ]);
    // 02:30 CEST + 1 h = 02:30 CET: one real hour.
    expect(os[2].endsAt.toISOString()).toBe('2026-10-25T01:30:00.000Z');
  });

  it('Europe/Berlin 09:00–10:00: same local time every day, the UTC offset shifts', () => {
    const spring = occurrences(win('2026-03-28T09:00', 'Europe/Berlin', 'FREQ=DAILY'), ...span('2026-03-28T00:00Z', '2026-03-30T00:00Z'));
    expect(starts(spring)).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z']);
    const fall = occurrences(win('2026-10-24T09:00', 'Europe/Berlin', 'FREQ=DAILY'), ...span('2026-10-24T00:00Z', '2026-10-26T00:00Z'));
    expect(starts(fall)).toEqual(['2026-10-24T07:00:00.000Z', '2026-10-25T08:00:00.000Z']);
    expect(fall.map((o) => o.endsAt.toISOString())).toEqual(['2026-10-24T08:00:00.000Z', '2026-10-25T09:00:00.000Z']);
  });

  it('America/New_York spring forward (2026-03-08) and fall back (2026-11-01)', () => {
    const z = 'America/New_York';
    const spring = occurrences(win('2026-03-07T02:30', z, 'FREQ=DAILY'), ...span('2026-03-07T00:00Z', '2026-03-10T00:00Z'));
    expect(spring.map((o) => local(o, z))).toEqual(['2026-03-07 02:30 -05:00', '2026-03-08 03:30 -04:00', '2026-03-09 02:30 -04:00']);
    expect(starts(spring)).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
    // 02:30 is after New York's repeated hour (01:00–02:00): unambiguous.
    const fall = occurrences(win('2026-10-31T02:30', z, 'FREQ=DAILY'), ...span('2026-10-31T00:00Z', '2026-11-02T12:00Z'));
    expect(starts(fall)).toEqual(['2026-10-31T06:30:00.000Z', '2026-11-01T07:30:00.000Z', '2026-11-02T07:30:00.000Z']);
    const nine = occurrences(win('2026-03-07T09:00', z, 'FREQ=DAILY'), ...span('2026-03-07T00:00Z', '2026-03-09T00:00Z'));
    expect(starts(nine)).toEqual(['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z']);
    const nineFall = occurrences(win('2026-10-31T09:00', z, 'FREQ=DAILY'), ...span('2026-10-31T00:00Z', '2026-11-02T00:00Z'));
    expect(starts(nineFall)).toEqual(['2026-10-31T13:00:00.000Z', '2026-11-01T14:00:00.000Z']);
    // Inside the repeated hour: the earlier instant (EDT).
    const amb = occurrences(win('2026-10-31T01:30', z, 'FREQ=DAILY'), ...span('2026-11-01T00:00Z', '2026-11-02T00:00Z'));
    expect(starts(amb)).toEqual(['2026-11-01T05:30:00.000Z']);
  });

  it('a 2-hour window from 01:00 on the spring-forward day lasts two real hours (ends 04:00 CEST)', () => {
    const w = win('2026-03-28T01:00', 'Europe/Berlin', 'FREQ=DAILY', 2);
    const [o] = occurrences(w, ...span('2026-03-29T00:00Z', '2026-03-29T12:00Z'));
    expect(o.startsAt.toISOString()).toBe('2026-03-29T00:00:00.000Z');
    expect(o.endsAt.toISOString()).toBe('2026-03-29T02:00:00.000Z');
    expect(DateTime.fromJSDate(o.endsAt, { zone: 'Europe/Berlin' }).toFormat('HH:mm')).toBe('04:00');
  });
});

describe('WEEKLY and MONTHLY', () => {
  it('WEEKLY;INTERVAL=2;BYDAY naming the start day: every other week', () => {
    const w = win('2026-01-05T10:00', 'UTC', 'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO'); // a Monday
    expect(isExpandable(w)).toBe(true);
    expect(starts(occurrences(w, ...span('2026-01-01T00:00Z', '2026-02-17T00:00Z')))).toEqual([
      '2026-01-05T10:00:00.000Z', '2026-01-19T10:00:00.000Z', '2026-02-02T10:00:00.000Z', '2026-02-16T10:00:00.000Z',
    ]);
  });

  it('BYDAY is judged in the window\'s timezone, not in UTC', () => {
    // 2026-01-04T23:30Z is Sunday in UTC but Monday 00:30 in Berlin.
    const monday = win('2026-01-05T00:30', 'Europe/Berlin', 'FREQ=WEEKLY;BYDAY=MO');
    expect(isExpandable(monday)).toBe(true);
    expect(isExpandable({ ...monday, recurrenceRule: 'FREQ=WEEKLY;BYDAY=SU' })).toBe(false);
    expect(starts(occurrences(monday, ...span('2026-01-10T00:00Z', '2026-01-13T00:00Z')))).toEqual(['2026-01-11T23:30:00.000Z']);
  });

  it('MONTHLY;BYMONTHDAY naming the start day', () => {
    const w = win('2026-01-15T22:00', 'Europe/Berlin', 'FREQ=MONTHLY;BYMONTHDAY=15');
    expect(isExpandable(w)).toBe(true);
    expect(occurrences(w, ...span('2026-01-01T00:00Z', '2026-08-01T00:00Z')).map((o) => local(o, 'Europe/Berlin'))).toEqual([
      '2026-01-15 22:00 +01:00', '2026-02-15 22:00 +01:00', '2026-03-15 22:00 +01:00', '2026-04-15 22:00 +02:00',
      '2026-05-15 22:00 +02:00', '2026-06-15 22:00 +02:00', '2026-07-15 22:00 +02:00',
    ]);
    expect(isExpandable({ ...w, recurrenceRule: 'FREQ=MONTHLY;BYMONTHDAY=16' })).toBe(false);
  });

  it('MONTHLY from the 31st skips months without one (RFC 5545), also far from the start', () => {
    const w = win('2016-01-31T09:00', 'UTC', 'FREQ=MONTHLY');
    expect(starts(occurrences(w, ...span('2016-01-01T00:00Z', '2016-06-01T00:00Z')))).toEqual([
      '2016-01-31T09:00:00.000Z', '2016-03-31T09:00:00.000Z', '2016-05-31T09:00:00.000Z',
    ]);
    expect(starts(occurrences(w, ...span('2026-06-01T00:00Z', '2026-09-01T00:00Z')))).toEqual(['2026-07-31T09:00:00.000Z', '2026-08-31T09:00:00.000Z']);
  });

  it('skipping ahead for a long-running window gives the same occurrences as walking from the start', () => {
    const rules = ['FREQ=DAILY;INTERVAL=3', 'FREQ=WEEKLY;INTERVAL=5;WKST=SU', 'FREQ=MONTHLY;INTERVAL=7', 'FREQ=MONTHLY;BYDAY=TU',
      'FREQ=DAILY;BYDAY=TU', 'FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=30'];
    for (const rule of rules) {
      const w = win('2019-04-30T23:15', 'America/New_York', rule, 30); // a Tuesday, the 30th
      expect(isExpandable(w)).toBe(true);
      const [from, to] = span('2025-12-20T00:00Z', '2026-12-31T00:00Z');
      const walked = occurrences(w, w.startsAt, to).filter((o) => o.endsAt > from);
      expect({ rule, os: starts(occurrences(w, from, to)) }).toEqual({ rule, os: starts(walked) });
      expect(walked.length).toBeGreaterThan(1);
    }
  });
});

describe('COUNT and UNTIL', () => {
  const daily = (rule: string) => win('2026-01-05T10:00', 'Europe/Berlin', rule);
  const all = (w: WindowTiming) => starts(occurrences(w, ...span('2026-01-01T00:00Z', '2027-01-01T00:00Z')));

  it('COUNT counts the first occurrence; nothing after the last', () => {
    const w = daily('FREQ=DAILY;COUNT=3');
    expect(all(w)).toEqual(['2026-01-05T09:00:00.000Z', '2026-01-06T09:00:00.000Z', '2026-01-07T09:00:00.000Z']);
    expect(nextOccurrence(w, new Date('2026-01-07T09:59:59Z'))?.startsAt.toISOString()).toBe('2026-01-07T09:00:00.000Z');
    expect(nextOccurrence(w, new Date('2026-01-07T10:00:00Z'))).toBeNull();
    expect(lastOccurrence(w, new Date('2026-02-01T00:00Z'))?.startsAt.toISOString()).toBe('2026-01-07T09:00:00.000Z');
  });

  it('UNTIL is inclusive: as an instant, a local date-time and a local date', () => {
    expect(all(daily('FREQ=DAILY;UNTIL=20260107T090000Z'))).toHaveLength(3);
    expect(all(daily('FREQ=DAILY;UNTIL=20260107T085959Z'))).toHaveLength(2);
    expect(all(daily('FREQ=DAILY;UNTIL=20260107T100000'))).toHaveLength(3);
    expect(all(daily('FREQ=DAILY;UNTIL=20260107T095959'))).toHaveLength(2);
    expect(all(daily('FREQ=DAILY;UNTIL=20260107'))).toHaveLength(3);
    expect(all(daily('freq=weekly;until=20260119'))).toEqual(['2026-01-05T09:00:00.000Z', '2026-01-12T09:00:00.000Z', '2026-01-19T09:00:00.000Z']);
  });

  it('an UNTIL before the start leaves the first occurrence', () => {
    expect(all(daily('FREQ=DAILY;UNTIL=20250101'))).toEqual(['2026-01-05T09:00:00.000Z']);
  });
});

describe('rules that cover only the first occurrence', () => {
  const monday = '2026-01-05T10:00';
  const unsupported = [
    'FREQ=WEEKLY;BYDAY=TU', 'FREQ=YEARLY', 'FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO', 'FREQ=HOURLY', 'hello world', '',
    'RRULE:FREQ=DAILY', 'DTSTART:20260105T100000Z\nRRULE:FREQ=DAILY', 'FREQ=DAILY;COUNT=3;UNTIL=20260110', 'FREQ=WEEKLY;BYDAY=MO,TU',
    'FREQ=MONTHLY;BYDAY=1MO', 'FREQ=DAILY;INTERVAL=0', 'FREQ=DAILY;FREQ=DAILY', 'FREQ=DAILY;BYHOUR=10', 'FREQ=DAILY;UNTIL=20260230',
    'FREQ=MONTHLY;BYMONTHDAY=5,6', 'FREQ=DAILY;', 'INTERVAL=2', 'FREQ=DAILY;BYDAY=MO;BYMONTHDAY=5',
  ];

  it.each(unsupported)('%j is not expanded', (rule) => {
    const w = win(monday, 'UTC', rule);
    expect(isExpandable(w)).toBe(false);
    expect(starts(occurrences(w, ...span('2026-01-01T00:00Z', '2027-01-01T00:00Z')))).toEqual(['2026-01-05T10:00:00.000Z']);
    expect(nextOccurrence(w, new Date('2026-01-05T11:00:00Z'))).toBeNull();
  });

  it('supported forms are expanded, case-insensitively, with surrounding whitespace', () => {
    for (const rule of ['FREQ=DAILY', 'freq=daily;interval=2', ' FREQ=WEEKLY;BYDAY=MO;WKST=SU ', 'FREQ=MONTHLY;BYMONTHDAY=5;COUNT=2']) {
      expect({ rule, ok: isExpandable(win(monday, 'UTC', rule)) }).toEqual({ rule, ok: true });
    }
  });

  it('no rule, or an unknown zone: the first occurrence only', () => {
    expect(isExpandable(win(monday, 'UTC', null))).toBe(false);
    const bad = { ...win(monday, 'UTC', 'FREQ=DAILY'), timezone: 'Mars/Olympus' };
    expect(isExpandable(bad)).toBe(false);
    expect(starts(occurrences(bad, ...span('2026-01-01T00:00Z', '2026-02-01T00:00Z')))).toEqual(['2026-01-05T10:00:00.000Z']);
  });
});

describe('activeOccurrence and nextOccurrence at the edges', () => {
  const oneOff = win('2026-01-05T10:00', 'UTC', null);
  const daily = win('2026-01-05T10:00', 'UTC', 'FREQ=DAILY');
  const at = (s: string) => new Date(s);

  it('start inclusive, end exclusive', () => {
    expect(activeOccurrence(oneOff, at('2026-01-05T09:59:59.999Z'))).toBeNull();
    expect(activeOccurrence(oneOff, at('2026-01-05T10:00:00Z'))?.startsAt.toISOString()).toBe('2026-01-05T10:00:00.000Z');
    expect(activeOccurrence(oneOff, at('2026-01-05T10:59:59.999Z'))).not.toBeNull();
    expect(activeOccurrence(oneOff, at('2026-01-05T11:00:00Z'))).toBeNull();
  });

  it('next is the occurrence in progress, else the next one, else null', () => {
    expect(nextOccurrence(oneOff, at('2026-01-01T00:00Z'))?.startsAt.toISOString()).toBe('2026-01-05T10:00:00.000Z');
    expect(nextOccurrence(oneOff, at('2026-01-05T10:30Z'))?.startsAt.toISOString()).toBe('2026-01-05T10:00:00.000Z');
    expect(nextOccurrence(oneOff, at('2026-01-05T11:00Z'))).toBeNull();
    expect(nextOccurrence(daily, at('2026-01-05T11:00Z'))?.startsAt.toISOString()).toBe('2026-01-06T10:00:00.000Z');
    expect(activeOccurrence(daily, at('2026-03-10T10:00Z'))?.endsAt.toISOString()).toBe('2026-03-10T11:00:00.000Z');
    expect(activeOccurrence(daily, at('2026-03-10T11:00Z'))).toBeNull();
  });

  it('the first occurrence is exactly the stored one, milliseconds included', () => {
    const w: WindowTiming = { startsAt: new Date('2026-01-05T10:00:00.250Z'), endsAt: new Date('2026-01-05T10:30:00.250Z'), timezone: 'UTC', recurrenceRule: 'FREQ=DAILY' };
    expect(starts(occurrences(w, ...span('2026-01-05T00:00Z', '2026-01-07T00:00Z')))).toEqual(['2026-01-05T10:00:00.250Z', '2026-01-06T10:00:00.250Z']);
    expect(activeOccurrence(w, new Date('2026-01-06T10:30:00.249Z'))).not.toBeNull();
    expect(activeOccurrence(w, new Date('2026-01-06T10:30:00.250Z'))).toBeNull();
  });

  it('a long-running daily window answers quickly', () => {
    const old = win('2006-01-01T03:00', 'Europe/Berlin', 'FREQ=DAILY');
    const t = Date.now();
    for (let i = 0; i < 50; i++) nextOccurrence(old, at('2026-06-01T12:00Z'));
    expect(nextOccurrence(old, at('2026-06-01T12:00Z'))?.startsAt.toISOString()).toBe('2026-06-02T01:00:00.000Z');
    expect(Date.now() - t).toBeLessThan(1000);
  });
});
