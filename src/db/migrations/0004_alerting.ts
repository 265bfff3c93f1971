import { Kysely, sql } from 'kysely';

/**
 * Alerting: channel secrets and confirmation, monitor↔channel links,
 * deliveries with their attempts, incident postmortems and escalation state,
 * maintenance windows, on-call schedules, escalation policies, overrides and
 * the incident feed token.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notification_channels')
    // The real target (webhook URLs and keys are credentials) sealed; `target` keeps the display form.
    .addColumn('target_enc', 'text')
    .addColumn('secret_enc', 'text')
    .addColumn('config', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('confirmation_token_hash', 'bytea')
    .addColumn('confirmation_sent_at', 'timestamptz')
    .execute();
  await sql`create unique index notification_channels_confirmation_idx on notification_channels (confirmation_token_hash) where confirmation_token_hash is not null`.execute(db);

  await db.schema.createTable('monitor_channels')
    .addColumn('monitor_id', 'text', (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('monitor_channels_pkey', ['monitor_id', 'channel_id'])
    .execute();
  await db.schema.createIndex('monitor_channels_channel_idx').on('monitor_channels').column('channel_id').execute();

  await db.schema.createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.references('notification_channels.id').onDelete('set null'))
    .addColumn('incident_id', 'text', (c) => c.references('incidents.id').onDelete('cascade'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('delivered_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('deliveries_incident_idx').on('deliveries').column('incident_id').execute();
  await db.schema.createTable('delivery_attempts')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('ok', 'boolean', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer')
    .execute();

  await db.schema.alterTable('incidents')
    .addColumn('postmortem_body', 'text')
    .addColumn('postmortem_author', 'text')
    .addColumn('postmortem_updated_at', 'timestamptz')
    .addColumn('escalation_policy_id', 'text')
    .addColumn('escalation_step', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema.createTable('maintenance_windows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ends_at', 'timestamptz', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('monitor_ids', sql`text[]`, (c) => c.notNull())
    .addColumn('recurrence_rule', 'text')
    .addColumn('keep_checking', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('show_on_status_page', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('notify_subscribers', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index maintenance_windows_monitors_idx on maintenance_windows using gin (monitor_ids)`.execute(db);

  await db.schema.createTable('oncall_schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('shift_length_hours', 'integer', (c) => c.notNull())
    .addColumn('handoff_time', 'text', (c) => c.notNull())
    // Ordered user ids: the rotation.
    .addColumn('participant_ids', sql`text[]`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createTable('escalation_policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('repeat', 'integer', (c) => c.notNull().defaultTo(0))
    // [{afterMinutes, targetType: schedule|user|channel, targetId}]
    .addColumn('steps', 'jsonb', (c) => c.notNull())
    .addColumn('monitor_ids', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createTable('oncall_overrides')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('schedule_id', 'text', (c) => c.notNull().references('oncall_schedules.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ends_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema.createTable('feed_tokens')
    .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

/** Drops what the migration created. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['feed_tokens', 'oncall_overrides', 'escalation_policies', 'oncall_schedules', 'maintenance_windows', 'delivery_attempts', 'deliveries', 'monitor_channels']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
  await db.schema.alterTable('incidents').dropColumn('postmortem_body').dropColumn('postmortem_author').dropColumn('postmortem_updated_at')
    .dropColumn('escalation_policy_id').dropColumn('escalation_step').execute();
  await db.schema.alterTable('notification_channels').dropColumn('target_enc').dropColumn('secret_enc').dropColumn('config')
    .dropColumn('confirmation_token_hash').dropColumn('confirmation_sent_at').execute();
}
