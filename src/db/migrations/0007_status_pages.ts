import { Kysely, sql } from 'kysely';

/**
 * Status pages: their settings, components (monitors placed on a page),
 * subscribers, and a custom domain proved by a DNS TXT record.
 *
 * Change notifications (as in 0006) for the tables a rendered page is made
 * of, so that every process drops a cached page when one of them changes. A
 * monitor's row changes on every check; what a page shows changes only when
 * its status does, so `monitors` gets a row trigger that notifies
 * `monitor_status` only then.
 */
const WATCHED = ['status_pages', 'status_page_components', 'incident_events', 'maintenance_windows'];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('status_pages')
    .addColumn('headline', 'text')
    .addColumn('description', 'text')
    .addColumn('logo_url', 'text')
    .addColumn('custom_css', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('public'))
    .addColumn('theme_accent', 'text', (c) => c.notNull().defaultTo('#2563eb'))
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en'))
    .addColumn('history_days', 'integer', (c) => c.notNull().defaultTo(90))
    .addColumn('show_response_times', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('show_incident_history', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('subscribers_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('hide_service_branding', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('group_by_host', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('custom_domain', 'text')
    .addColumn('domain_token', 'text')
    .addColumn('domain_verified_at', 'timestamptz')
    .addColumn('domain_checked_at', 'timestamptz')
    .addColumn('domain_found', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn('domain_error', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('status_pages_custom_domain_idx').unique().on('status_pages').column('custom_domain').execute();
  await db.schema.createIndex('status_pages_org_idx').on('status_pages').column('organization_id').execute();

  await db.schema.createTable('status_page_components')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('page_id', 'text', (c) => c.notNull().references('status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('monitor_id', 'text', (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('display_name', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('status_page_components_page_monitor_key', ['page_id', 'monitor_id'])
    .execute();
  await db.schema.createIndex('status_page_components_monitor_idx').on('status_page_components').column('monitor_id').execute();

  await db.schema.createTable('status_page_subscribers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('page_id', 'text', (c) => c.notNull().references('status_pages.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    // An e-mail address as given (domain lower-cased); for webhooks only the host, the URL itself is sealed.
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('target_enc', 'text')
    // What makes two subscriptions the same: the lower-cased address, or the SHA-256 of the URL.
    .addColumn('target_key', 'text', (c) => c.notNull())
    .addColumn('confirm_token_hash', 'bytea')
    .addColumn('confirm_sent_at', 'timestamptz')
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('status_page_subscribers_page_target_key', ['page_id', 'kind', 'target_key'])
    .execute();
  await db.schema.createIndex('status_page_subscribers_token_idx').on('status_page_subscribers').column('confirm_token_hash').execute();

  for (const t of WATCHED) {
    await sql`create trigger vigil_notify_change after insert or update or delete or truncate on ${sql.table(t)}
      for each statement execute function vigil_notify_change()`.execute(db);
  }
  await sql`create or replace function vigil_notify_monitor_status() returns trigger language plpgsql as $$
    begin
      perform pg_notify('vigil_changes', 'monitor_status');
      return null;
    end $$`.execute(db);
  await sql`create trigger vigil_notify_status after update of status on monitors
    for each row when (old.status is distinct from new.status) execute function vigil_notify_monitor_status()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists vigil_notify_status on monitors`.execute(db);
  await sql`drop function if exists vigil_notify_monitor_status()`.execute(db);
  for (const t of WATCHED) await sql`drop trigger if exists vigil_notify_change on ${sql.table(t)}`.execute(db);
  await db.schema.dropTable('status_page_subscribers').ifExists().execute();
  await db.schema.dropTable('status_page_components').ifExists().execute();
  for (const c of ['headline', 'description', 'logo_url', 'custom_css', 'password_hash', 'visibility', 'theme_accent', 'language', 'history_days',
    'show_response_times', 'show_incident_history', 'subscribers_enabled', 'hide_service_branding', 'group_by_host', 'custom_domain',
    'domain_token', 'domain_verified_at', 'domain_checked_at', 'domain_found', 'domain_error', 'updated_at']) {
    await db.schema.alterTable('status_pages').dropColumn(c).execute();
  }
}
