// A report's window as whole months (analytics_monthly) and the days of its
// partial months (analytics_daily): every day of the window exactly once.
import { windowPeriods } from '../src/analytics/report';

const days = (from: string, to: string) => {
  const out: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); d.toISOString().slice(0, 10) <= to; d.setUTCDate(d.getUTCDate() + 1)) out.push(d.toISOString().slice(0, 10));
  return out;
};
const monthDays = (first: string, last: string) => days(first, last).filter((d) => d >= first).filter((d) => d.slice(0, 7) <= last.slice(0, 7));

test.each([
  ['2025-11-27', '2026-11-26', { months: ['2025-12-01', '2026-10-01'], days: [['2025-11-27', '2025-11-30'], ['2026-11-01', '2026-11-26']] }],
  ['2026-11-20', '2026-11-26', { months: null, days: [['2026-11-20', '2026-11-26']] }],
  ['2026-10-25', '2026-11-26', { months: null, days: [['2026-10-25', '2026-11-26']] }],
  ['2026-10-01', '2026-11-26', { months: ['2026-10-01', '2026-10-01'], days: [['2026-11-01', '2026-11-26']] }],
  ['2026-10-02', '2026-11-30', { months: ['2026-11-01', '2026-11-01'], days: [['2026-10-02', '2026-10-31']] }],
  ['2026-01-01', '2026-12-31', { months: ['2026-01-01', '2026-12-01'], days: [] }],
  ['2024-02-10', '2024-03-31', { months: ['2024-03-01', '2024-03-01'], days: [['2024-02-10', '2024-02-29']] }],
])('%s .. %s', (from, to, expected) => {
  const got = windowPeriods(from, to);
  expect(got).toEqual(expected);
  // Every day of the window once: the months' days plus the day ranges.
  const covered = [
    ...(got.months ? monthDays(got.months[0], `${got.months[1].slice(0, 7)}-31`) : []),
    ...got.days.flatMap(([a, b]) => days(a, b)),
  ].sort();
  expect(covered).toEqual(days(from, to));
});
