// A report's window as whole months (analytics_monthly), days added and days
// subtracted (analytics_daily): every day of the window counted exactly once.
import { windowPeriods, type Periods } from '../src/analytics/report';

const days = (from: string, to: string) => {
  const out: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); d.toISOString().slice(0, 10) <= to; d.setUTCDate(d.getUTCDate() + 1)) out.push(d.toISOString().slice(0, 10));
  return out;
};
/** How often each day is counted by `p`, when nothing is counted after `today` (the end of an open window). */
function counted(p: Periods, today: string): Map<string, number> {
  const n = new Map<string, number>();
  const add = (d: string, k: number) => n.set(d, (n.get(d) ?? 0) + k);
  if (p.months) for (const d of days(p.months[0], today)) if (d.slice(0, 7) <= p.months[1].slice(0, 7)) add(d, 1);
  for (const [a, b] of p.days) for (const d of days(a, b)) add(d, 1);
  if (p.minus) for (const d of days(p.minus[0], p.minus[1])) add(d, -1);
  for (const [d, k] of n) if (k === 0) n.delete(d);
  return n;
}

test.each([
  // Closed windows (an end that is not today).
  ['2025-11-27', '2026-11-26', false, { months: ['2025-12-01', '2026-10-01'], days: [['2025-11-27', '2025-11-30'], ['2026-11-01', '2026-11-26']], minus: null }],
  ['2026-11-20', '2026-11-26', false, { months: null, days: [['2026-11-20', '2026-11-26']], minus: null }],
  ['2026-10-25', '2026-11-26', false, { months: null, days: [['2026-10-25', '2026-10-31'], ['2026-11-01', '2026-11-26']], minus: null }],
  ['2026-10-01', '2026-11-26', false, { months: ['2026-10-01', '2026-10-01'], days: [['2026-11-01', '2026-11-26']], minus: null }],
  ['2026-01-01', '2026-12-31', false, { months: ['2026-01-01', '2026-12-01'], days: [], minus: null }],
  ['2024-02-10', '2024-03-31', false, { months: ['2024-02-01', '2024-03-01'], days: [], minus: ['2024-02-01', '2024-02-09'] }],
  // Open windows (ending today): the month to date is its monthly row.
  ['2025-11-27', '2026-11-26', true, { months: ['2025-12-01', '2026-11-01'], days: [['2025-11-27', '2025-11-30']], minus: null }],
  ['2025-11-05', '2026-11-03', true, { months: ['2025-11-01', '2026-11-01'], days: [], minus: ['2025-11-01', '2025-11-04'] }],
  ['2026-11-20', '2026-11-26', true, { months: null, days: [['2026-11-20', '2026-11-26']], minus: null }],
  ['2026-11-01', '2026-11-26', true, { months: ['2026-11-01', '2026-11-01'], days: [], minus: null }],
  ['2026-11-03', '2026-11-26', true, { months: ['2026-11-01', '2026-11-01'], days: [], minus: ['2026-11-01', '2026-11-02'] }],
  ['2026-11-20', '2026-11-26', false, { months: null, days: [['2026-11-20', '2026-11-26']], minus: null }],
  ['2026-10-28', '2026-11-26', true, { months: ['2026-11-01', '2026-11-01'], days: [['2026-10-28', '2026-10-31']], minus: null }],
  ['2026-10-05', '2026-11-26', true, { months: ['2026-10-01', '2026-11-01'], days: [], minus: ['2026-10-01', '2026-10-04'] }],
])('%s .. %s (open end: %s)', (from, to, openEnd, expected) => {
  const got = windowPeriods(from, to, openEnd);
  expect(got).toEqual(expected);
  // Every day of the window once, none outside it.
  const n = counted(got, to);
  expect([...n.keys()].sort()).toEqual(days(from, to));
  expect([...n.values()].every((k) => k === 1)).toBe(true);
});

test('every window of up to 400 days ending on any day of two years is counted exactly once, open or closed', () => {
  for (const to of days('2025-01-01', '2026-12-31').filter((_, i) => i % 7 === 0)) {
    for (const len of [1, 2, 7, 15, 16, 28, 30, 31, 45, 90, 180, 365, 400]) {
      const from = days('2023-01-01', to).at(-len)!;
      for (const openEnd of [false, true]) {
        const n = counted(windowPeriods(from, to, openEnd), to);
        expect({ from, to, openEnd, ok: [...n.keys()].sort().join() === days(from, to).join() && [...n.values()].every((k) => k === 1) }).toEqual({ from, to, openEnd, ok: true });
      }
    }
  }
});
