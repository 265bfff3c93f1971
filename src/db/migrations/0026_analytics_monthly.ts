import { Kysely, sql } from 'kysely';

/**
 * `analytics_monthly`: the daily roll-ups summed per calendar month (UTC),
 * keyed `(site_id, dimension, month, value)` with `month` the month's first
 * day. A report over a long window reads whole months from here and only the
 * days of the partial months at its ends from `analytics_daily`, so a
 * 365-day breakdown aggregates about twelve rows per value instead of 365
 * (docs/analytics.md, "Roll-up rows"). The drain adds to it in the same
 * transaction as the daily rows; existing daily rows are summed in here once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table analytics_monthly (
    site_id text not null references analytics_sites(id) on delete cascade,
    month date not null,
    dimension text not null,
    value text not null,
    visitors bigint not null default 0,
    pageviews bigint not null default 0,
    events bigint not null default 0,
    visits bigint not null default 0,
    bounces bigint not null default 0,
    duration_s bigint not null default 0,
    primary key (site_id, dimension, month, value),
    check (month = date_trunc('month', month)::date)
  )`.execute(db);
  await sql`insert into analytics_monthly (site_id, month, dimension, value, visitors, pageviews, events, visits, bounces, duration_s)
    select site_id, date_trunc('month', day)::date, dimension, value, sum(visitors), sum(pageviews), sum(events), sum(visits), sum(bounces), sum(duration_s)
    from analytics_daily group by 1, 2, 3, 4`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_monthly').execute();
}
