import { Kysely, sql } from 'kysely';

/**
 * Indexes of GET /search (src/domain/search/).
 *
 * - For the first field of each type (name, title, e-mail): a btree on
 *   (organization_id, lower(field) text_pattern_ops), which finds the exact
 *   and prefix matches in order, and a trigram GIN index on lower(field) for
 *   matches inside it.
 * - For the other fields searched: a trigram GIN index each.
 * - Postmortems: a full-text GIN index on to_tsvector('simple', body).
 *
 * pg_trgm is a trusted contrib extension (PostgreSQL 13+): the database
 * owner may create it, and both the system PostgreSQL and the embedded one
 * ship it. No column holding a sealed value, hash or secret is indexed.
 */
const TRIGRAM: [string, string, string][] = [
  // [index, table, expression]
  ['monitors_search_name', 'monitors', 'lower(name)'],
  ['monitors_search_tags', 'monitors', 'search_tags(tags)'],
  ['incidents_search_title', 'incidents', 'lower(title)'],
  ['hosts_search_name', 'hosts', 'lower(name)'],
  ['hosts_search_address', 'hosts', 'lower(address)'],
  ['status_pages_search_name', 'status_pages', 'lower(name)'],
  ['status_pages_search_slug', 'status_pages', 'lower(slug)'],
  ['workspaces_search_name', 'workspaces', 'lower(name)'],
  ['notification_channels_search_name', 'notification_channels', 'lower(name)'],
  ['maintenance_windows_search_title', 'maintenance_windows', 'lower(title)'],
  ['error_projects_search_name', 'error_projects', 'lower(name)'],
  ['error_issues_search_title', 'error_issues', 'lower(title)'],
  ['error_issues_search_culprit', 'error_issues', 'lower(culprit)'],
  ['analytics_sites_search_name', 'analytics_sites', 'lower(name)'],
  ['analytics_sites_search_domain', 'analytics_sites', 'lower(domain)'],
  ['users_search_email', 'users', 'lower(email)'],
  ['users_search_name', 'users', 'lower(name)'],
  ['invitations_search_email', 'invitations', 'lower(email)'],
  ['api_keys_search_name', 'api_keys', 'lower(name)'],
  ['probes_search_name', 'probes', 'lower(name)'],
  ['agents_search_name', 'agents', 'lower(name)'],
  ['agents_search_hostname', 'agents', 'lower(hostname)'],
];

/** [index, table, first field, then]: exact and prefix matches, in order, per organisation. */
const PREFIX: [string, string, string, string?][] = [
  ['monitors_search_name_prefix', 'monitors', 'name'],
  // Incidents: newest first among equal titles.
  ['incidents_search_title_prefix', 'incidents', 'title', 'started_at desc'],
  ['hosts_search_name_prefix', 'hosts', 'name'],
  ['status_pages_search_name_prefix', 'status_pages', 'name'],
  ['notification_channels_search_name_prefix', 'notification_channels', 'name'],
  ['maintenance_windows_search_title_prefix', 'maintenance_windows', 'title'],
  ['error_projects_search_name_prefix', 'error_projects', 'name'],
  ['error_issues_search_title_prefix', 'error_issues', 'title'],
  ['analytics_sites_search_name_prefix', 'analytics_sites', 'name'],
  ['api_keys_search_name_prefix', 'api_keys', 'name'],
  ['agents_search_name_prefix', 'agents', 'name'],
];

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  // Tags joined for one trigram index (array_to_string is only stable in general; on text[] it is immutable).
  await sql`create function search_tags(tags text[]) returns text language sql immutable parallel safe
    as $$ select array_to_string(tags, chr(10)) $$`.execute(db);
  for (const [name, table, expr] of TRIGRAM) {
    await sql`create index ${sql.raw(name)} on ${sql.table(table)} using gin (${sql.raw(expr)} gin_trgm_ops)`.execute(db);
  }
  await sql`create index notification_channels_search_email on notification_channels using gin (lower(target) gin_trgm_ops) where kind = 'email'`.execute(db);
  for (const [name, table, field, then] of PREFIX) {
    await sql`create index ${sql.raw(name)} on ${sql.table(table)} (organization_id, lower(${sql.ref(field)}) text_pattern_ops${sql.raw(then ? `, ${then}` : '')})`.execute(db);
  }
  await sql`create index incidents_search_postmortem on incidents using gin (to_tsvector('simple', postmortem_body)) where postmortem_body is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of [...TRIGRAM, ...PREFIX]) await sql`drop index if exists ${sql.raw(name)}`.execute(db);
  await sql`drop index if exists notification_channels_search_email`.execute(db);
  await sql`drop index if exists incidents_search_postmortem`.execute(db);
  await sql`drop function if exists search_tags(text[])`.execute(db);
}
