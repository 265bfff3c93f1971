import { Kysely, sql } from 'kysely';

/**
 * When an on-call schedule's rotation (re)started. Creating a schedule
 * starts it at the last hand-over on or before the creation; changing its
 * rotation (zone, shift length, hand-over time, participants) restarts it
 * the same way from the change (updateSchedule). Null: never changed, the
 * rotation runs from `created_at` as before, so existing schedules keep
 * who is on call.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table oncall_schedules add column rotation_from timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table oncall_schedules drop column rotation_from`.execute(db);
}
