import { Kysely, sql } from 'kysely';

/**
 * Web analytics (docs/analytics.md):
 * - `analytics_sites`: a measured site (domain unique on the server, since
 *   the Events API names a site by domain; `public_id` for Vigil's script);
 * - `analytics_site_channels`: who a traffic drop pages;
 * - `analytics_salts`: the per-site daily salt of the visitor hash, deleted
 *   after 48 h, so no key joins two days;
 * - `analytics_buffer`: accepted events not yet counted (src/ingest/buffer.ts);
 * - `analytics_events`: raw events kept for the plan's retention;
 * - `analytics_sessions`: open visits (30 min of inactivity ends one), 48 h;
 * - `analytics_seen`: which (day, dimension, value) a visitor was already
 *   counted under, so visitors are daily uniques, 48 h;
 * - `analytics_hourly` / `analytics_daily`: the roll-ups every read answers
 *   from, per site, dimension ('' for the totals) and value.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('analytics_sites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull().unique())
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('traffic_alerting', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('traffic_checked_at', 'timestamptz')
    .addColumn('traffic_incident_id', 'text')
    .execute();
  await sql`create index analytics_sites_org on analytics_sites (organization_id)`.execute(db);

  await db.schema.createTable('analytics_site_channels')
    .addColumn('site_id', 'text', (c) => c.notNull().references('analytics_sites.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('analytics_site_channels_pk', ['site_id', 'channel_id'])
    .execute();

  await db.schema.createTable('analytics_salts')
    .addColumn('site_id', 'text', (c) => c.notNull().references('analytics_sites.id').onDelete('cascade'))
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('salt', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_salts_pk', ['site_id', 'day'])
    .execute();

  // The buffer: one row per accepted event, already parsed and hashed at ingestion (no IP, no full user agent).
  await sql`create table analytics_buffer (
    seq bigint generated always as identity primary key,
    site_id text not null,
    at timestamptz not null,
    name text not null,
    pathname text not null,
    hostname text not null,
    referrer text,
    referrer_source text,
    country text,
    browser text,
    os text,
    device text,
    utm_source text,
    utm_medium text,
    utm_campaign text,
    props jsonb,
    visitor bigint not null,
    interactive boolean not null
  )`.execute(db);

  await sql`create table analytics_events (
    site_id text not null references analytics_sites(id) on delete cascade,
    at timestamptz not null,
    name text not null,
    pathname text not null,
    hostname text not null,
    referrer text,
    referrer_source text,
    country text,
    browser text,
    os text,
    device text,
    utm_source text,
    utm_medium text,
    utm_campaign text,
    props jsonb,
    visitor bigint not null,
    session bigint not null,
    interactive boolean not null
  )`.execute(db);
  await sql`create index analytics_events_site_at on analytics_events (site_id, at)`.execute(db);

  await sql`create table analytics_sessions (
    site_id text not null references analytics_sites(id) on delete cascade,
    visitor bigint not null,
    session bigint not null,
    started_at timestamptz not null,
    last_at timestamptz not null,
    pageviews integer not null default 0,
    interactive_events integer not null default 0,
    entry jsonb not null,
    primary key (site_id, visitor, started_at)
  )`.execute(db);
  await sql`create index analytics_sessions_last on analytics_sessions (last_at)`.execute(db);

  await sql`create table analytics_seen (
    site_id text not null references analytics_sites(id) on delete cascade,
    day date not null,
    dimension text not null,
    value text not null,
    visitor bigint not null,
    primary key (site_id, day, dimension, value, visitor)
  )`.execute(db);
  await sql`create index analytics_seen_day on analytics_seen (day)`.execute(db);

  for (const [table, unit] of [['analytics_hourly', 'hour timestamptz'], ['analytics_daily', 'day date']] as const) {
    const col = unit.split(' ')[0];
    await sql`create table ${sql.table(table)} (
      site_id text not null references analytics_sites(id) on delete cascade,
      ${sql.raw(unit)} not null,
      dimension text not null,
      value text not null,
      visitors bigint not null default 0,
      pageviews bigint not null default 0,
      events bigint not null default 0,
      visits bigint not null default 0,
      bounces bigint not null default 0,
      duration_s bigint not null default 0,
      primary key (site_id, dimension, ${sql.ref(col)}, value)
    )`.execute(db);
  }

  // A traffic drop is an incident of its site (monitor_id null).
  await sql`alter table incidents add column analytics_site_id text references analytics_sites(id) on delete cascade`.execute(db);
  await sql`create index incidents_analytics_site on incidents (analytics_site_id) where analytics_site_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table incidents drop column analytics_site_id`.execute(db);
  for (const t of ['analytics_daily', 'analytics_hourly', 'analytics_seen', 'analytics_sessions', 'analytics_events', 'analytics_buffer', 'analytics_salts', 'analytics_site_channels', 'analytics_sites']) {
    await db.schema.dropTable(t).execute();
  }
}
