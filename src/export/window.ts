/**
 * The time window of an export: `from` and `to` as asked, each entity's
 * default, and the 92-day limit of hourly series (spec: Limits, "Hourly
 * export window").
 */
import { ApiError, invalid } from '../pipeline/errors';
import type { ExportEntity } from './entity';

/** The widest window of an hourly series, in days. */
export const HOURLY_WINDOW_DAYS = 92;
const DAY = 86_400_000;

/** The window as asked: `to` defaults to now, `from` to none. */
export interface AskedWindow { from: Date | null; to: Date }

/** Reads `from` and `to` (RFC 3339, checked by the contract's validator); `from` must come before `to`. */
export function askedWindow(query: { from?: string; to?: string }, now: Date): AskedWindow {
  const to = query.to !== undefined ? new Date(query.to) : now;
  const from = query.from !== undefined ? new Date(query.from) : null;
  if (Number.isNaN(to.getTime())) throw invalid('to', 'must be an RFC 3339 date-time');
  if (from && Number.isNaN(from.getTime())) throw invalid('from', 'must be an RFC 3339 date-time');
  if (from && from.getTime() >= to.getTime()) throw invalid('from', 'must be before to');
  return { from, to };
}

/**
 * The window of one entity: an hourly series starts HOURLY_WINDOW_DAYS before
 * `to` when no `from` is given, and a wider one is 400
 * `export_window_too_wide`; other entities take the window as asked (no
 * `from`: from the beginning).
 */
export function entityWindow(entity: ExportEntity, name: string, asked: AskedWindow): AskedWindow {
  if (!entity.hourly) return asked;
  const from = asked.from ?? new Date(asked.to.getTime() - HOURLY_WINDOW_DAYS * DAY);
  const span = asked.to.getTime() - from.getTime();
  if (span > HOURLY_WINDOW_DAYS * DAY) {
    const days = (span / DAY).toFixed(1).replace(/\.0$/, '');
    throw new ApiError(400, 'export_window_too_wide',
      `Hourly series are exported ${HOURLY_WINDOW_DAYS} days at a time; from to to spans ${days} days (${name}).`,
      { maxDays: String(HOURLY_WINDOW_DAYS), days, entity: name },
      [{ field: 'from', reason: `more than ${HOURLY_WINDOW_DAYS} days before to` }]);
  }
  return { from, to: asked.to };
}
