import { Kysely, sql } from 'kysely';

/**
 * Error issues: one row per fingerprint of a project (an issue, not an
 * event), with counts kept as events are grouped into it; hourly counts for
 * the 24-hour spark line; the distinct users seen; and the releases a
 * project has seen, in the order first seen (how releases that are not
 * semver compare).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('error_issues')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('error_projects.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('type', 'text')
    .addColumn('value', 'text')
    .addColumn('culprit', 'text')
    .addColumn('level', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('unresolved'))
    .addColumn('times_seen', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('first_release', 'text')
    .addColumn('last_release', 'text')
    .addColumn('last_event_seq', 'bigint')
    .addColumn('resolved_in_release', 'text')
    .addColumn('resolved_at', 'timestamptz')
    .addColumn('ignored_until', 'timestamptz')
    .addUniqueConstraint('error_issues_project_fingerprint', ['project_id', 'fingerprint'])
    .execute();
  await sql`create index error_issues_org_activity on error_issues (organization_id, last_seen_at desc)`.execute(db);
  await db.schema.createTable('error_issue_hours')
    .addColumn('issue_id', 'text', (c) => c.notNull().references('error_issues.id').onDelete('cascade'))
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('error_issue_hours_pk', ['issue_id', 'hour'])
    .execute();
  await db.schema.createTable('error_issue_users')
    .addColumn('issue_id', 'text', (c) => c.notNull().references('error_issues.id').onDelete('cascade'))
    .addColumn('user_key', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('error_issue_users_pk', ['issue_id', 'user_key'])
    .execute();
  await db.schema.createTable('error_releases')
    .addColumn('project_id', 'text', (c) => c.notNull().references('error_projects.id').onDelete('cascade'))
    .addColumn('release', 'text', (c) => c.notNull())
    .addColumn('first_seen_seq', 'bigserial')
    .addPrimaryKeyConstraint('error_releases_pk', ['project_id', 'release'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['error_releases', 'error_issue_users', 'error_issue_hours', 'error_issues']) await db.schema.dropTable(t).execute();
}
