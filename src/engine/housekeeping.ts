import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { dropPartitionsOlderThan, ensureUpcomingPartitions } from './partitions';
import { deleteExpiredSamples } from '../repo/agents';

/**
 * Periodic upkeep: partitions made ahead of need, raw results past each
 * organisation's plan retention removed (whole old partitions dropped), hourly
 * roll-ups kept 90 days (graphs reach back 7), daily roll-ups per plan;
 * server agents' samples and their hourly roll-ups per plan.
 */
export async function housekeeping(db: Db, now = new Date()): Promise<void> {
  await ensureUpcomingPartitions(db, now);
  const longest = await db.selectFrom('plans').select((eb) => eb.fn.max('history_retention_days').as('d')).executeTakeFirstOrThrow();
  await dropPartitionsOlderThan(db, Number(longest.d), now);
  await sql`delete from check_results r using organizations o, plans p
    where r.organization_id = o.id and p.code = o.plan and r.at < ${now}::timestamptz - make_interval(days => p.history_retention_days)`.execute(db);
  await sql`delete from rollup_daily d using monitors m, organizations o, plans p
    where d.monitor_id = m.id and m.organization_id = o.id and p.code = o.plan and d.day < (${now}::timestamptz - make_interval(days => p.history_retention_days))::date`.execute(db);
  await sql`delete from rollup_hourly where hour < ${now}::timestamptz - interval '90 days'`.execute(db);
  await deleteExpiredSamples(db, now);
}
