import { Kysely, sql } from 'kysely';

/**
 * The engine's schedule moves out of `monitors` into a narrow table of its
 * own, `monitor_schedule`: when each monitor is next due and who holds it.
 *
 * Why: every check rewrote its `monitors` row twice (the claim's lease, then
 * the result with the next due time). `next_due_at` is indexed, so neither
 * update could be HOT: each wrote a new entry into every index of the table —
 * nine of them, the search's trigram GIN indexes among them — and each claim
 * and lease renewal fired the change notification that makes every process
 * drop its cached reads. With the schedule apart, a claim or renewal touches a
 * row of five small columns with two indexes and notifies nobody, and the
 * result's update of `monitors` (status, timings, uptime: no indexed column)
 * is HOT, for which the table keeps room on each page (fillfactor 70).
 *
 * A trigger keeps the schedule beside each monitor: a new monitor is due at
 * once; enabling or resuming one makes it due at once; `runnable` and
 * `probe_id` follow the monitor's.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table monitor_schedule (
    monitor_id text primary key references monitors (id) on delete cascade,
    runnable boolean not null,
    probe_id text,
    next_due_at timestamptz not null default now(),
    lease_until timestamptz
  ) with (fillfactor = 70)`.execute(db);
  await sql`insert into monitor_schedule (monitor_id, runnable, probe_id, next_due_at, lease_until)
    select id, enabled and not paused, probe_id, coalesce(next_due_at, now()), lease_until from monitors`.execute(db);
  await sql`create index monitor_schedule_due_idx on monitor_schedule (next_due_at) where runnable`.execute(db);
  await sql`create or replace function vigil_monitor_schedule() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into monitor_schedule (monitor_id, runnable, probe_id) values (new.id, new.enabled and not new.paused, new.probe_id);
      elsif (new.enabled and not new.paused) is distinct from (old.enabled and not old.paused) or new.probe_id is distinct from old.probe_id then
        update monitor_schedule set runnable = new.enabled and not new.paused, probe_id = new.probe_id,
          next_due_at = case when new.enabled and not new.paused and not (old.enabled and not old.paused) then now() else next_due_at end
          where monitor_id = new.id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_monitor_schedule after insert or update of enabled, paused, probe_id on monitors
    for each row execute function vigil_monitor_schedule()`.execute(db);
  await sql`drop index if exists monitors_due_idx`.execute(db);
  await sql`alter table monitors drop column next_due_at, drop column lease_until`.execute(db);
  await sql`alter table monitors set (fillfactor = 70)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table monitors reset (fillfactor)`.execute(db);
  await sql`alter table monitors add column next_due_at timestamptz, add column lease_until timestamptz`.execute(db);
  await sql`update monitors m set next_due_at = s.next_due_at, lease_until = s.lease_until from monitor_schedule s where s.monitor_id = m.id`.execute(db);
  await sql`create index monitors_due_idx on monitors (next_due_at) where enabled and not paused`.execute(db);
  await sql`drop trigger if exists vigil_monitor_schedule on monitors`.execute(db);
  await sql`drop function if exists vigil_monitor_schedule()`.execute(db);
  await sql`drop table monitor_schedule`.execute(db);
}
