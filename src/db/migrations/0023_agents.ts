import { Kysely, sql } from 'kysely';

/**
 * Server agents (docs/agents.md):
 * - `agents`: enrolled agents, organisation-wide (`workspace_id` null) or of
 *   a workspace, with what their latest report said of them.
 * - `agent_tokens`: the SHA-256 of each agent's token (the token itself is
 *   never stored), apart from `agents` so that the report endpoint can cache
 *   it until an agent is enrolled or deleted rather than until any report
 *   (each moves `agents.last_seen_at`); it notifies other processes.
 * - `agent_report_buffer`: accepted samples on the ingestion write path
 *   (src/ingest/buffer.ts), appended by group commit and drained set-wise by
 *   workers (src/ingest/agents.ts). No foreign key, as for heartbeat pings:
 *   a sample of an agent deleted meanwhile is dropped when drained.
 * - `agent_samples`: the samples, one per agent and time (a sample drained
 *   twice after a crash, or posted twice by an agent retrying, is kept once).
 * - `agent_rollup_hourly`: per agent and hour, `{figure: {sum, count, min,
 *   max}}` of the samples (as `rollup_hourly.readings`, merged with
 *   `vigil_merge_readings`).
 * - `monitors.agent_id`: the agent an `agent` monitor watches (also in its
 *   sealed config), so that a new sample can bring its check forward.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table agents (
      id text primary key,
      organization_id text not null references organizations (id) on delete cascade,
      workspace_id text references workspaces (id) on delete cascade,
      name text not null,
      hostname text,
      os text,
      version text,
      interval_seconds integer,
      last_seen_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index agents_org on agents (organization_id, name)`.execute(db);

  await sql`create table agent_tokens (
      hash bytea primary key,
      agent_id text not null unique references agents (id) on delete cascade
    )`.execute(db);
  await sql`create trigger vigil_notify_change after insert or update or delete or truncate on agent_tokens
    for each statement execute function vigil_notify_change()`.execute(db);

  const figures = sql.raw(`cpu_percent double precision,
      memory_percent double precision, memory_used_bytes double precision, memory_total_bytes double precision,
      swap_percent double precision, swap_used_bytes double precision, swap_total_bytes double precision,
      disk_percent double precision, disks jsonb,
      load1 double precision, load5 double precision, load15 double precision,
      network_rx_bytes double precision, network_tx_bytes double precision,
      network_rx_bps double precision, network_tx_bps double precision`);

  await sql`create table agent_report_buffer (
      seq bigint generated always as identity primary key,
      agent_id text not null,
      received_at timestamptz not null,
      hostname text,
      os text,
      version text,
      interval_seconds integer,
      at timestamptz not null,
      ${figures}
    ) with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0,
      autovacuum_vacuum_insert_threshold = 10000)`.execute(db);

  await sql`create table agent_samples (
      agent_id text not null references agents (id) on delete cascade,
      at timestamptz not null,
      ${figures},
      primary key (agent_id, at)
    )`.execute(db);
  // Retention deletes by time across agents.
  await sql`create index agent_samples_at on agent_samples (at)`.execute(db);

  await sql`create table agent_rollup_hourly (
      agent_id text not null references agents (id) on delete cascade,
      hour timestamptz not null,
      samples integer not null,
      figures jsonb not null,
      primary key (agent_id, hour)
    )`.execute(db);
  await sql`create index agent_rollup_hourly_hour on agent_rollup_hourly (hour)`.execute(db);

  await sql`alter table monitors add column agent_id text`.execute(db);
  await sql`create index monitors_agent on monitors (agent_id) where agent_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists monitors_agent`.execute(db);
  await sql`alter table monitors drop column if exists agent_id`.execute(db);
  await sql`drop table if exists agent_rollup_hourly`.execute(db);
  await sql`drop table if exists agent_samples`.execute(db);
  await sql`drop table if exists agent_report_buffer`.execute(db);
  await sql`drop table if exists agent_tokens`.execute(db);
  await sql`drop table if exists agents`.execute(db);
}
