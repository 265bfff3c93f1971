import { Kysely, sql } from 'kysely';

/**
 * The event stream's log (src/stream/, docs/stream.md). Triggers write one
 * row per change a reader may see, in the transaction of the change, whoever
 * makes it (the API, a worker, the CLI, psql): no writer can forget one, and
 * a row exists exactly when its change committed. Any API process serves any
 * client from this table, so a reconnect may land anywhere.
 *
 * Order is (tx, seq): `tx` is the writing transaction's id. A reader takes
 * only rows of transactions older than every transaction still running (the
 * snapshot's xmin), so a row that commits later can never sort before one
 * already delivered — which a plain sequence cannot promise, as transactions
 * commit in another order than they draw numbers.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table stream_events (
    tx xid8 not null default pg_current_xact_id(),
    seq bigint generated always as identity,
    organization_id text not null,
    workspace_id text,
    type text not null,
    data jsonb not null,
    at timestamptz not null default now(),
    primary key (tx, seq)
  )`.execute(db);
  await sql`create index stream_events_at_idx on stream_events (at)`.execute(db);
  // The newest position ever pruned: a cursor before it may have missed events (the client refetches).
  await sql`create table stream_pruned (id int primary key default 1 check (id = 1), tx xid8 not null, seq bigint not null)`.execute(db);
  await sql`insert into stream_pruned (tx, seq) values ('0'::xid8, 0)`.execute(db);

  // Readers wake on a notification (src/db/changeFeed.ts), sent only by statements that logged something.
  await sql`create function vigil_stream_notify() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from new_rows) then perform pg_notify('vigil_changes', 'stream_events'); end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_stream_notify after insert on stream_events referencing new table as new_rows
    for each statement execute function vigil_stream_notify()`.execute(db);

  // Monitors: created, changed (what a read shows, not check bookkeeping), status, deleted.
  await sql`create function vigil_stream_monitor() returns trigger language plpgsql as $$
    declare shown_old text; shown_new text;
    begin
      if tg_op = 'INSERT' then
        insert into stream_events (organization_id, workspace_id, type, data)
        values (new.organization_id, new.workspace_id, 'monitor.changed', jsonb_build_object('monitorId', new.id, 'change', 'created'));
        return null;
      elsif tg_op = 'DELETE' then
        insert into stream_events (organization_id, workspace_id, type, data)
        values (old.organization_id, old.workspace_id, 'monitor.deleted', jsonb_build_object('monitorId', old.id));
        return null;
      end if;
      shown_old := case when old.paused then 'paused' else old.status end;
      shown_new := case when new.paused then 'paused' else new.status end;
      if shown_old is distinct from shown_new then
        insert into stream_events (organization_id, workspace_id, type, data)
        values (new.organization_id, new.workspace_id, 'monitor.status', jsonb_build_object('monitorId', new.id, 'status', shown_new,
          'since', to_char((case when old.status is distinct from new.status then new.status_since else now() end) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
      end if;
      if old.paused is distinct from new.paused then
        insert into stream_events (organization_id, workspace_id, type, data)
        values (new.organization_id, new.workspace_id, 'monitor.changed', jsonb_build_object('monitorId', new.id, 'change', case when new.paused then 'paused' else 'resumed' end));
      elsif (old.name, old.enabled, old.interval_seconds, old.tags, old.confirmations, old.depends_on, old.probe_id, old.config_enc, old.kind)
            is distinct from (new.name, new.enabled, new.interval_seconds, new.tags, new.confirmations, new.depends_on, new.probe_id, new.config_enc, new.kind) then
        insert into stream_events (organization_id, workspace_id, type, data)
        values (new.organization_id, new.workspace_id, 'monitor.changed', jsonb_build_object('monitorId', new.id, 'change', 'updated'));
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_stream_monitor_insert after insert on monitors for each row execute function vigil_stream_monitor()`.execute(db);
  await sql`create trigger vigil_stream_monitor_delete after delete on monitors for each row execute function vigil_stream_monitor()`.execute(db);
  // The WHEN clause keeps the worker's every-check updates (last check, lease, due time) from entering plpgsql at all.
  await sql`create trigger vigil_stream_monitor_update after update on monitors for each row
    when ((old.status, old.paused, old.name, old.enabled, old.interval_seconds, old.tags, old.confirmations, old.depends_on, old.probe_id, old.config_enc, old.kind)
      is distinct from (new.status, new.paused, new.name, new.enabled, new.interval_seconds, new.tags, new.confirmations, new.depends_on, new.probe_id, new.config_enc, new.kind))
    execute function vigil_stream_monitor()`.execute(db);

  // Incidents: opened (a new row, or back to open), acknowledged, resolved. A traffic drop names its site as v1 reads do.
  await sql`create function vigil_stream_incident() returns trigger language plpgsql as $$
    begin
      insert into stream_events (organization_id, workspace_id, type, data)
      values (new.organization_id, new.workspace_id,
        case new.status when 'acknowledged' then 'incident.acknowledged' when 'resolved' then 'incident.resolved' else 'incident.opened' end,
        jsonb_build_object('incidentId', new.id, 'monitorId', coalesce(new.monitor_id, new.analytics_site_id), 'status', new.status));
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_stream_incident_insert after insert on incidents for each row execute function vigil_stream_incident()`.execute(db);
  await sql`create trigger vigil_stream_incident_update after update of status on incidents for each row
    when (old.status is distinct from new.status) execute function vigil_stream_incident()`.execute(db);

  // Comments on the timeline (statement level: a mass outage's delivery notes never enter plpgsql row by row).
  await sql`create function vigil_stream_comment() returns trigger language plpgsql as $$
    begin
      insert into stream_events (organization_id, workspace_id, type, data)
      select i.organization_id, i.workspace_id, 'incident.commented',
             jsonb_build_object('incidentId', i.id, 'monitorId', coalesce(i.monitor_id, i.analytics_site_id), 'status', i.status)
        from new_rows n join incidents i on i.id = n.incident_id
       where n.kind = 'comment';
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_stream_comment after insert on incident_events referencing new table as new_rows
    for each statement execute function vigil_stream_comment()`.execute(db);

  // The setup checklist's sources, while the organisation has not dismissed it: one event per workspace touched
  // (null: organisation-wide), so a confined reader hears only of its own view's changes.
  // The setup checklist's sources, while the organisation has not dismissed it: one event per workspace touched
  // (null: organisation-wide), so a confined reader hears only of its own view's changes.
  for (const [table, ws] of [['monitors', 'workspace_id'], ['status_pages', 'workspace_id'], ['notification_channels', 'workspace_id'], ['memberships', 'null::text']] as const) {
    for (const [event, rows] of [['insert', 'new'], ['delete', 'old']] as const) {
      // One function per trigger: each reads its own transition table's columns.
      const fn = `vigil_stream_setup_${table}_${event}`;
      await sql`create function ${sql.raw(fn)}() returns trigger language plpgsql as ${sql.raw(`$$
        begin
          insert into stream_events (organization_id, workspace_id, type, data)
          select distinct r.organization_id, r.workspace_id, 'setup.changed', '{}'::jsonb
            from (select organization_id, ${ws} as workspace_id from ${rows}_rows) r
            join organizations o on o.id = r.organization_id
           where o.setup_dismissed_at is null;
          return null;
        end $$`)}`.execute(db);
      await sql`create trigger ${sql.raw(`vigil_stream_setup_${event}`)} after ${sql.raw(event)} on ${sql.table(table)}
        referencing ${sql.raw(rows)} table as ${sql.raw(`${rows}_rows`)} for each statement execute function ${sql.raw(fn)}()`.execute(db);
    }
  }
  // A channel starting or stopping to count (confirmed, enabled); the organisation's dismissal itself.
  await sql`create function vigil_stream_setup_row() returns trigger language plpgsql as $$
    begin
      if tg_table_name = 'organizations' then
        insert into stream_events (organization_id, workspace_id, type, data) values (new.id, null, 'setup.changed', '{}'::jsonb);
      elsif not exists (select 1 from organizations o where o.id = new.organization_id and o.setup_dismissed_at is not null) then
        insert into stream_events (organization_id, workspace_id, type, data) values (new.organization_id, new.workspace_id, 'setup.changed', '{}'::jsonb);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_stream_setup_update after update on notification_channels for each row
    when ((old.enabled, old.confirmed_at is null, old.kind) is distinct from (new.enabled, new.confirmed_at is null, new.kind))
    execute function vigil_stream_setup_row()`.execute(db);
  await sql`create trigger vigil_stream_setup_update after update of setup_dismissed_at on organizations for each row
    when (old.setup_dismissed_at is distinct from new.setup_dismissed_at) execute function vigil_stream_setup_row()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['monitors', 'status_pages', 'notification_channels', 'memberships']) {
    for (const e of ['insert', 'delete']) {
      await sql`drop trigger if exists ${sql.raw(`vigil_stream_setup_${e}`)} on ${sql.table(t)}`.execute(db);
      await sql`drop function if exists ${sql.raw(`vigil_stream_setup_${t}_${e}`)}()`.execute(db);
    }
  }
  await sql`drop trigger if exists vigil_stream_setup_update on notification_channels`.execute(db);
  await sql`drop trigger if exists vigil_stream_setup_update on organizations`.execute(db);
  await sql`drop function if exists vigil_stream_setup_row()`.execute(db);
  await sql`drop trigger if exists vigil_stream_comment on incident_events`.execute(db);
  await sql`drop function if exists vigil_stream_comment()`.execute(db);
  for (const t of ['vigil_stream_incident_insert', 'vigil_stream_incident_update']) await sql`drop trigger if exists ${sql.raw(t)} on incidents`.execute(db);
  await sql`drop function if exists vigil_stream_incident()`.execute(db);
  for (const t of ['vigil_stream_monitor_insert', 'vigil_stream_monitor_delete', 'vigil_stream_monitor_update']) await sql`drop trigger if exists ${sql.raw(t)} on monitors`.execute(db);
  await sql`drop function if exists vigil_stream_monitor()`.execute(db);
  await sql`drop table if exists stream_pruned`.execute(db);
  await sql`drop table if exists stream_events`.execute(db);
  await sql`drop function if exists vigil_stream_notify()`.execute(db);
}
