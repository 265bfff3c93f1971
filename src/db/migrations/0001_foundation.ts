import { Kysely, sql } from 'kysely';

/**
 * Foundation: plans, organisations, people, workspaces, keys, monitors, audit,
 * plus the first shape of the tables the setup checklist and summary read
 * (incidents, hosts, channels, status pages); later migrations extend them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('plans')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('rank', 'integer', (c) => c.notNull())
    .addColumn('monitor_cap', 'integer')
    .addColumn('interval_floor_seconds', 'integer', (c) => c.notNull())
    .addColumn('history_retention_days', 'integer', (c) => c.notNull())
    .addColumn('sms_included', 'boolean', (c) => c.notNull())
    .addColumn('audit_log_included', 'boolean', (c) => c.notNull())
    .addColumn('status_page_cap', 'integer')
    .addColumn('member_cap', 'integer')
    .execute();
  await db.insertInto('plans').values([
    { code: 'free', name: 'Free', rank: 0, monitor_cap: 20, interval_floor_seconds: 180, history_retention_days: 90, sms_included: false, audit_log_included: false, status_page_cap: 1, member_cap: 3 },
    { code: 'pro', name: 'Pro', rank: 1, monitor_cap: 200, interval_floor_seconds: 30, history_retention_days: 365, sms_included: true, audit_log_included: false, status_page_cap: 10, member_cap: 20 },
    { code: 'business', name: 'Business', rank: 2, monitor_cap: 2000, interval_floor_seconds: 15, history_retention_days: 730, sms_included: true, audit_log_included: true, status_page_cap: 50, member_cap: null },
    { code: 'enterprise', name: 'Enterprise', rank: 3, monitor_cap: null, interval_floor_seconds: 5, history_retention_days: 1095, sms_included: true, audit_log_included: true, status_page_cap: null, member_cap: null },
  ]).execute();

  await db.schema.createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull().references('plans.code'))
    .addColumn('setup_dismissed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema.createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index users_email_key on users (lower(email))`.execute(db);

  await db.schema.createTable('memberships')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('workspace_ids', sql`text[]`)
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('memberships_org_user_key', ['organization_id', 'user_id'])
    .execute();

  await db.schema.createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('client_reference', 'text')
    .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('workspaces_org_slug_key', ['organization_id', 'slug'])
    .execute();

  await db.schema.createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('membership_id', 'text', (c) => c.notNull().references('memberships.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('scopes', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('workspace_ids', sql`text[]`)
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_prefix_idx').on('api_keys').column('prefix').execute();
  await db.schema.createIndex('api_keys_org_idx').on('api_keys').column('organization_id').execute();

  await db.schema.createTable('monitors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('config_enc', 'text', (c) => c.notNull())
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('confirmations', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('depends_on', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('probe_id', 'text')
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('paused', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('status_since', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_checked_at', 'timestamptz')
    .addColumn('last_response_time_ms', 'double precision')
    .addColumn('last_message', 'text')
    .addColumn('last_check_detail', 'jsonb')
    .addColumn('uptime_24h', 'double precision')
    .addColumn('uptime_30d', 'double precision')
    .addColumn('next_due_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('monitors_org_idx').on('monitors').columns(['organization_id', 'workspace_id']).execute();
  await sql`create index monitors_tags_idx on monitors using gin (tags)`.execute(db);

  await db.schema.createTable('hosts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('provider', 'text')
    .addColumn('address', 'text')
    .addColumn('notes', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index hosts_org_name_key on hosts (organization_id, lower(rtrim(name, '.')))`.execute(db);
  await db.schema.createTable('monitor_hosts')
    .addColumn('monitor_id', 'text', (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('host_id', 'text', (c) => c.notNull().references('hosts.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('monitor_hosts_pkey', ['monitor_id', 'host_id'])
    .execute();

  await db.schema.createTable('incidents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('monitor_id', 'text', (c) => c.references('monitors.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('cause', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('root_incident_id', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('acknowledged_at', 'timestamptz')
    .addColumn('resolved_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('incidents_org_status_idx').on('incidents').columns(['organization_id', 'status']).execute();

  await db.schema.createTable('notification_channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id').onDelete('cascade'))
    .addColumn('owner_membership_id', 'text', (c) => c.references('memberships.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema.createTable('status_pages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema.createTable('audit_log')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text')
    .addColumn('workspace_id', 'text')
    .addColumn('changes', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
  await db.schema.createIndex('audit_log_org_seq_idx').on('audit_log').columns(['organization_id', 'seq']).execute();
}

/** Drops everything the migration created. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['audit_log', 'status_pages', 'notification_channels', 'incidents', 'monitor_hosts', 'hosts', 'monitors', 'api_keys', 'workspaces', 'memberships', 'users', 'organizations', 'plans']) {
    await db.schema.dropTable(t).ifExists().cascade().execute();
  }
}
