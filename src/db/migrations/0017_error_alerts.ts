import { Kysely, sql } from 'kysely';

/**
 * Error alerts: the channels attached to an error project (paged for a new
 * issue and a regression), deliveries that concern an error issue rather
 * than an incident (gone with the issue, as an incident's go with the
 * incident), and the timeline of an issue — first seen, regressed, resolved,
 * ignored, reopened — with the release of the event or person behind each.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('error_project_channels')
    .addColumn('project_id', 'text', (c) => c.notNull().references('error_projects.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('error_project_channels_pkey', ['project_id', 'channel_id'])
    .execute();
  await db.schema.createIndex('error_project_channels_channel_idx').on('error_project_channels').column('channel_id').execute();

  await db.schema.alterTable('deliveries')
    .addColumn('error_issue_id', 'text', (c) => c.references('error_issues.id').onDelete('cascade'))
    .execute();
  await sql`create index deliveries_error_issue_idx on deliveries (error_issue_id) where error_issue_id is not null`.execute(db);

  await db.schema.createTable('error_issue_events')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('issue_id', 'text', (c) => c.notNull().references('error_issues.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('release', 'text')
    .addColumn('environment', 'text')
    .addColumn('actor_type', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .execute();
  await db.schema.createIndex('error_issue_events_issue_idx').on('error_issue_events').columns(['issue_id', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('error_issue_events').execute();
  await db.schema.alterTable('deliveries').dropColumn('error_issue_id').execute();
  await db.schema.dropTable('error_project_channels').execute();
}
