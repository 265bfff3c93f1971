import { Kysely, sql } from 'kysely';

/**
 * The monitoring engine: scheduling and heartbeat columns on monitors, raw
 * check results partitioned by month, hourly and daily roll-ups, incident
 * timelines and private probes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitors')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_until', 'timestamptz')
    .addColumn('heartbeat_token_enc', 'text')
    .addColumn('heartbeat_token_hash', 'bytea')
    .addColumn('last_ping_at', 'timestamptz')
    .addColumn('last_ping_kind', 'text')
    .execute();
  await sql`create index monitors_due_idx on monitors (next_due_at) where enabled and not paused`.execute(db);
  await sql`create unique index monitors_heartbeat_token_idx on monitors (heartbeat_token_hash) where heartbeat_token_hash is not null`.execute(db);

  // Raw results: the big table, one partition a month (created ahead by the worker).
  await sql`create table check_results (
    monitor_id text not null,
    organization_id text not null,
    at timestamptz not null,
    outcome text not null,
    response_time_ms double precision,
    cause text,
    message text,
    detail jsonb,
    probe_id text
  ) partition by range (at)`.execute(db);
  await sql`create index check_results_monitor_at_idx on check_results (monitor_id, at desc)`.execute(db);
  await sql`create index check_results_org_at_idx on check_results (organization_id, at)`.execute(db);

  await db.schema.createTable('rollup_hourly')
    .addColumn('monitor_id', 'text', (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('checks', 'integer', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('degraded', 'integer', (c) => c.notNull())
    .addColumn('response_sum_ms', 'double precision', (c) => c.notNull())
    .addColumn('response_count', 'integer', (c) => c.notNull())
    // {name: {sum, count, min, max, unit}} for value graphs (snmp readings)
    .addColumn('readings', 'jsonb')
    .addPrimaryKeyConstraint('rollup_hourly_pkey', ['monitor_id', 'hour'])
    .execute();
  // Merges per-reading aggregates {name: {sum, count, min, max, unit}} of two roll-up rows.
  await sql`create function vigil_merge_readings(a jsonb, b jsonb) returns jsonb language sql immutable as $$
    select case when a is null then b when b is null then a else (
      select coalesce(jsonb_object_agg(k, case
        when a ? k and b ? k then jsonb_build_object(
          'sum', (a->k->>'sum')::float8 + (b->k->>'sum')::float8,
          'count', (a->k->>'count')::int + (b->k->>'count')::int,
          'min', least((a->k->>'min')::float8, (b->k->>'min')::float8),
          'max', greatest((a->k->>'max')::float8, (b->k->>'max')::float8),
          'unit', coalesce(b->k->'unit', a->k->'unit'))
        when a ? k then a->k else b->k end), '{}'::jsonb)
      from (select jsonb_object_keys(a) as k union select jsonb_object_keys(b)) keys) end
  $$`.execute(db);
  await db.schema.createTable('rollup_daily')
    .addColumn('monitor_id', 'text', (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('checks', 'integer', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('degraded', 'integer', (c) => c.notNull())
    .addColumn('downtime_seconds', 'integer', (c) => c.notNull())
    .addColumn('response_sum_ms', 'double precision', (c) => c.notNull())
    .addColumn('response_count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rollup_daily_pkey', ['monitor_id', 'day'])
    .execute();

  await db.schema.createTable('incident_events')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('incident_id', 'text', (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('actor_type', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .addColumn('message', 'text')
    .addColumn('public', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text')
    .execute();
  await db.schema.createIndex('incident_events_incident_idx').on('incident_events').columns(['incident_id', 'seq']).execute();
  await db.schema.createIndex('incidents_org_started_idx').on('incidents').columns(['organization_id', 'started_at']).execute();

  await db.schema.createTable('probes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz')
    .addColumn('version', 'text')
    .addColumn('hostname', 'text')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
}

/** Drops what the migration created. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['probes', 'incident_events', 'rollup_daily', 'rollup_hourly', 'check_results']) await db.schema.dropTable(t).ifExists().execute();
  await sql`drop function if exists vigil_merge_readings(jsonb, jsonb)`.execute(db);
  await db.schema.alterTable('monitors')
    .dropColumn('consecutive_failures').dropColumn('lease_until').dropColumn('heartbeat_token_enc')
    .dropColumn('heartbeat_token_hash').dropColumn('last_ping_at').dropColumn('last_ping_kind').execute();
}
