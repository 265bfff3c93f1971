/**
 * Analytics upkeep (docs/analytics.md), run by the drain's worker every few
 * minutes: salts, sessions (from their start) and seen-visitor rows go after
 * 48 h (so no key
 * joins two days, and nothing about a visitor outlives the next day), raw
 * events and hourly roll-ups after the organisation's plan retention
 * (`plans.history_retention_days`, as check results). Daily and monthly
 * roll-ups stay with the site: reports read them (a year at most), and they
 * hold a 24th of the hourly rows or less.
 */
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { withTryLock } from '../db/locked';
import { ROLLUP_DIMENSIONS } from './count';
import { analyticsClock } from './visitor';

/** How long salts, sessions and seen-visitor rows are kept. */
export const VISITOR_STATE_HOURS = 48;

/**
 * Deletes what has outlived its keeping; `now` defaults to the analytics
 * clock. One process at a time (every worker runs it: two deleting the same
 * rows in different orders could deadlock); false when another was at it.
 */
export async function analyticsHousekeeping(db: Db, now: Date = analyticsClock.now()): Promise<boolean> {
  const done = await withTryLock(db, 'analytics:housekeeping', async (tx) => {
    // A day's salt is in use until the day ends; from 48 h after it began it is gone (today's and yesterday's stay).
    const cutoffDay = new Date(now.getTime() - VISITOR_STATE_HOURS * 3600_000).toISOString().slice(0, 10);
    await sql`delete from analytics_salts where day <= ${cutoffDay}::date`.execute(tx);
    await sql`delete from analytics_seen where day <= ${cutoffDay}::date`.execute(tx);
    await sql`delete from analytics_sessions where started_at < ${now}::timestamptz - make_interval(hours => ${VISITOR_STATE_HOURS})`.execute(tx);
    await sql`delete from analytics_events e using analytics_sites s, organizations o, plans p
      where e.site_id = s.id and s.organization_id = o.id and p.code = o.plan
        and e.at < ${now}::timestamptz - make_interval(days => p.history_retention_days)`.execute(tx);
    // Per site and dimension, so each delete walks the primary key (site_id, dimension, hour, value) from the oldest hour only.
    await sql`delete from analytics_hourly h using analytics_sites s, organizations o, plans p
      where h.site_id = s.id and s.organization_id = o.id and p.code = o.plan
        and h.dimension = any(${[...ROLLUP_DIMENSIONS]}::text[]) and h.hour < ${now}::timestamptz - make_interval(days => p.history_retention_days)`.execute(tx);
    return true;
  });
  return done ?? false;
}
