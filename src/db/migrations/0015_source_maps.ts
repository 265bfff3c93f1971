import { Kysely, sql } from 'kysely';

/**
 * Uploaded source maps of error projects, stored gzip-compressed; one per
 * debug id, or (without one) per release and file name: uploading again
 * replaces it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('error_sourcemaps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('error_projects.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('debug_id', 'text')
    .addColumn('release', 'text')
    .addColumn('map_gzip', 'bytea', (c) => c.notNull())
    .addColumn('size_bytes', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index error_sourcemaps_debug on error_sourcemaps (project_id, debug_id) where debug_id is not null`.execute(db);
  await sql`create unique index error_sourcemaps_release on error_sourcemaps (project_id, release, filename) where debug_id is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('error_sourcemaps').execute();
}
