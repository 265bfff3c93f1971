import { Kysely, sql } from 'kysely';

/**
 * In a mass outage every alert delivery adds a `notification` entry to its
 * incident's timeline, and each of those statements sent a change
 * notification (0007) that no reader needs (status pages never show
 * delivery notes) — while NOTIFY serialises the commits of every transaction
 * that sends one. Inserts of notification entries alone are now silent;
 * every other change to the timeline still notifies.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists vigil_notify_change on incident_events`.execute(db);
  await sql`create or replace function vigil_notify_timeline_insert() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from new_rows where kind <> 'notification') then
        perform pg_notify('vigil_changes', tg_table_name);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_notify_insert after insert on incident_events referencing new table as new_rows
    for each statement execute function vigil_notify_timeline_insert()`.execute(db);
  await sql`create trigger vigil_notify_change after update or delete or truncate on incident_events
    for each statement execute function vigil_notify_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists vigil_notify_insert on incident_events`.execute(db);
  await sql`drop trigger if exists vigil_notify_change on incident_events`.execute(db);
  await sql`drop function if exists vigil_notify_timeline_insert()`.execute(db);
  await sql`create trigger vigil_notify_change after insert or update or delete or truncate on incident_events
    for each statement execute function vigil_notify_change()`.execute(db);
}
