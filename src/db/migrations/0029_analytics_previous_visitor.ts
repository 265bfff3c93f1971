import { Kysely, sql } from 'kysely';

/**
 * `analytics_buffer.previous_visitor`: in the first 30 minutes of a UTC day,
 * the visitor hash an event would have had under the day before's salt
 * (null otherwise, and when that salt is gone), so a visit running across
 * midnight continues instead of counting twice (Plausible does the same:
 * reference B2). Only the buffer carries it: the drain uses it to find the
 * open session, and `analytics_events` keeps the day's hash alone.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table analytics_buffer add column previous_visitor bigint`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table analytics_buffer drop column previous_visitor`.execute(db);
}
