import { Kysely, sql } from 'kysely';

/**
 * Error tracking, first step: projects (the DSN's number `ref`, from its own
 * sequence so it never repeats, and its public key) and the events SDKs send
 * (stored as received, grouped into issues behind ingestion).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence error_project_ref start 1`.execute(db);
  await db.schema.createTable('error_projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('ref', 'bigint', (c) => c.notNull().unique().defaultTo(sql`nextval('error_project_ref')`))
    .addColumn('public_key', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('platform', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('error_projects_org').on('error_projects').column('organization_id').execute();
  // Ingestion looks projects up by ref from the read cache: other processes must hear of changes (0006).
  await sql`create trigger vigil_notify_change after insert or update or delete or truncate on error_projects
    for each statement execute function vigil_notify_change()`.execute(db);
  await db.schema.createTable('error_events')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('error_projects.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('issue_id', 'text')
    .execute();
  await sql`create index error_events_project_received on error_events (project_id, received_at)`.execute(db);
  await sql`create index error_events_ungrouped on error_events (seq) where issue_id is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('error_events').execute();
  await db.schema.dropTable('error_projects').execute();
  await sql`drop sequence error_project_ref`.execute(db);
}
