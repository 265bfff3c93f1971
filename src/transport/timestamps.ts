/**
 * Milliseconds of RFC 3339 timestamps, for the protobuf encoder: the
 * `YYYY-MM-DDTHH:MM:SS.mmmZ` form the API writes is read digit by digit (four
 * per monitor in a list of thousands); anything else goes to Date.parse.
 */

/** The number written by `n` decimal digits at `i`, or -1 when one of them is not a digit. */
function digits(s: string, i: number, n: number): number {
  let out = 0;
  for (let k = i; k < i + n; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    out = out * 10 + d;
  }
  return out;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function days(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

/** Milliseconds of an RFC 3339 timestamp (or Date); the `YYYY-MM-DDTHH:MM:SS.mmmZ` the API writes is read digit by digit. */
export function millis(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  const s = String(v);
  // The separators of YYYY-MM-DDTHH:MM:SS.mmmZ, then each part in range; anything else is left to Date.parse.
  if (s.length === 24 && s[4] === '-' && s[7] === '-' && s[10] === 'T' && s[13] === ':' && s[16] === ':' && s[19] === '.' && s[23] === 'Z') {
    const y = digits(s, 0, 4);
    const mo = digits(s, 5, 2);
    const d = digits(s, 8, 2);
    const h = digits(s, 11, 2);
    const mi = digits(s, 14, 2);
    const se = digits(s, 17, 2);
    const ms = digits(s, 20, 3);
    if (y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= (mo === 2 && leap(y) ? 29 : MONTH_DAYS[mo - 1])
      && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && se >= 0 && se <= 59 && ms >= 0) {
      return ((days(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + se * 1000 + ms;
    }
  }
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${s.slice(0, 40)}`);
  return ms;
}
