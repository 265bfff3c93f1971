import { Kysely, sql } from 'kysely';

/**
 * Heartbeat pings through the ingestion buffer (src/ingest/):
 * - `heartbeat_pings`: accepted pings, appended by group commit and taken
 *   set-wise by workers (src/ingest/pings.ts). No foreign key: checking one
 *   would lock the monitor row against the result writer's FOR UPDATE; a ping
 *   of a monitor deleted meanwhile is dropped when drained. Rows live for
 *   milliseconds, so dead tuples are vacuumed by count, not by share.
 * - `heartbeat_tokens`: which monitor a ping token belongs to, kept by
 *   triggers on `monitors`, so the ping endpoint can cache it until it changes
 *   (heartbeat monitors created or deleted) rather than until `monitors`
 *   changes (every lease and result).
 * - `ingest_drained`: a running count of the items each buffer's drain has
 *   taken (committed with the taking), so that "none lost" can be checked.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table heartbeat_pings (
      seq bigint generated always as identity primary key,
      monitor_id text not null,
      kind text not null,
      at timestamptz not null
    ) with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0,
      autovacuum_vacuum_insert_threshold = 10000)`.execute(db);
  await sql`create table ingest_drained (buffer text primary key, items bigint not null default 0)`.execute(db);

  await sql`create table heartbeat_tokens (
      hash bytea primary key,
      monitor_id text not null unique references monitors (id) on delete cascade
    )`.execute(db);
  await sql`insert into heartbeat_tokens (hash, monitor_id)
    select heartbeat_token_hash, id from monitors where heartbeat_token_hash is not null`.execute(db);
  await sql`create or replace function vigil_heartbeat_token() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' then
        delete from heartbeat_tokens where monitor_id = new.id and hash is distinct from new.heartbeat_token_hash;
      end if;
      if new.heartbeat_token_hash is not null then
        insert into heartbeat_tokens (hash, monitor_id) values (new.heartbeat_token_hash, new.id)
          on conflict (monitor_id) do update set hash = excluded.hash;
      end if;
      return null;
    end $$`.execute(db);
  // Only statements that set the token fire it: results and leases never do.
  await sql`create trigger vigil_heartbeat_token after insert or update of heartbeat_token_hash on monitors
    for each row execute function vigil_heartbeat_token()`.execute(db);
  // Other processes drop their cached tokens when it changes (src/db/changeFeed.ts).
  await sql`create trigger vigil_notify_change after insert or update or delete or truncate on heartbeat_tokens
    for each statement execute function vigil_notify_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists vigil_heartbeat_token on monitors`.execute(db);
  await sql`drop function if exists vigil_heartbeat_token()`.execute(db);
  await sql`drop table if exists heartbeat_tokens`.execute(db);
  await sql`drop table if exists ingest_drained`.execute(db);
  await sql`drop table if exists heartbeat_pings`.execute(db);
}
