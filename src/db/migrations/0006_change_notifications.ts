import { Kysely, sql } from 'kysely';

/**
 * Every statement that writes one of these tables sends NOTIFY vigil_changes
 * with the table's name (once per transaction and table: PostgreSQL folds equal
 * notifications), so that each process can drop cached reads another process's
 * write made stale (src/db/changeFeed.ts). Statement-level triggers: a batch
 * update of a thousand monitors costs one notification, not a thousand.
 */
const WATCHED = ['monitors', 'workspaces', 'hosts', 'monitor_hosts', 'incidents'];

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create or replace function vigil_notify_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('vigil_changes', tg_table_name);
      return null;
    end $$`.execute(db);
  for (const t of WATCHED) {
    await sql`create trigger vigil_notify_change after insert or update or delete or truncate on ${sql.table(t)}
      for each statement execute function vigil_notify_change()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of WATCHED) await sql`drop trigger if exists vigil_notify_change on ${sql.table(t)}`.execute(db);
  await sql`drop function if exists vigil_notify_change()`.execute(db);
}
