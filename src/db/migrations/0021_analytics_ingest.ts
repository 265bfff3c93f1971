import { Kysely, sql } from 'kysely';

/**
 * Analytics ingestion (src/analytics/ingest.ts, drain.ts):
 * - `analytics_sites` notifies its changes (src/db/changeFeed.ts), so the
 *   Events API finds a site by domain or public id from the read cache and a
 *   created, renamed or deleted site is seen at once by every process;
 * - `analytics_buffer` rows live for milliseconds: dead tuples are vacuumed
 *   by count, not by share (as `heartbeat_pings`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create trigger vigil_notify_change after insert or update or delete or truncate on analytics_sites
    for each statement execute function vigil_notify_change()`.execute(db);
  await sql`alter table analytics_buffer set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 10000)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table analytics_buffer reset (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
    autovacuum_vacuum_insert_scale_factor, autovacuum_vacuum_insert_threshold)`.execute(db);
  await sql`drop trigger if exists vigil_notify_change on analytics_sites`.execute(db);
}
