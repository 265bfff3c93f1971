/**
 * Wall time per SQL statement of a benchmark child (BENCH_SQL_TIMING=1): wraps
 * `pg.Client.prototype.query` and sums time and calls by statement text.
 */
import pg from 'pg';

/** One statement's totals. */
export interface SqlTime { text: string; n: number; ms: number }

let times = new Map<string, { n: number; ms: number }>();

/** Starts timing every query of this process. */
export function timeSql(): void {
  const original = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text ?? '?';
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 100);
    const t = performance.now();
    const out = original.apply(this, args);
    const done = () => { const s = times.get(key) ?? { n: 0, ms: 0 }; s.n++; s.ms += performance.now() - t; times.set(key, s); };
    if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(done, done);
    return out;
  };
}

/** The `limit` statements that took longest so far, longest first; `reset` starts counting afresh. */
export function slowestSql(limit: number, reset = false): SqlTime[] {
  const top = [...times.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, limit).map(([text, v]) => ({ text, ...v }));
  if (reset) times = new Map();
  return top;
}
