import { Kysely, sql } from 'kysely';

/**
 * Uploaded mobile symbols: one row per build (an iOS upload names its Mach-O
 * UUIDs, an Android upload its release), its files gzip-compressed beside it
 * (one per Mach-O slice UUID for iOS, the mapping for Android). Uploading the
 * same build again replaces it; the newest 20 builds of a project are kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('error_symbol_builds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('error_projects.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('release', 'text')
    .addColumn('debug_ids', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index error_symbol_builds_project on error_symbol_builds (project_id, created_at desc)`.execute(db);
  await sql`create unique index error_symbol_builds_release on error_symbol_builds (project_id, release) where platform = 'android'`.execute(db);
  await db.schema.createTable('error_symbol_files')
    .addColumn('build_id', 'text', (c) => c.notNull().references('error_symbol_builds.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('debug_id', 'text')
    .addColumn('content_gzip', 'bytea', (c) => c.notNull())
    .execute();
  await sql`create index error_symbol_files_debug on error_symbol_files (project_id, debug_id)`.execute(db);
  await sql`create index error_symbol_files_build on error_symbol_files (build_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('error_symbol_files').execute();
  await db.schema.dropTable('error_symbol_builds').execute();
}
