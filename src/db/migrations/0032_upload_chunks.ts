import { Kysely, sql } from 'kysely';

/**
 * Chunked uploads of sentry-cli and the bundler plugins (src/errors/upload):
 * chunks wait here, per organisation and by SHA-1, until the file they belong
 * to is assembled, so any process can assemble what another received; each
 * assembly's outcome is kept so the tools' polling gets the same answer
 * without the work (or the rate-limit point) being done twice. Both expire
 * after an hour (src/errors/upload/chunks.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table error_upload_chunks (
    organization_id text not null references organizations(id) on delete cascade,
    checksum text not null,
    data bytea not null,
    size_bytes integer not null,
    created_at timestamptz not null default now(),
    primary key (organization_id, checksum))`.execute(db);
  await sql`create index error_upload_chunks_created on error_upload_chunks (created_at)`.execute(db);
  await sql`create table error_upload_assemblies (
    organization_id text not null references organizations(id) on delete cascade,
    kind text not null,
    checksum text not null,
    target text not null,
    state text not null,
    detail text,
    result jsonb,
    created_at timestamptz not null default now(),
    primary key (organization_id, kind, checksum, target))`.execute(db);
  await sql`create index error_upload_assemblies_created on error_upload_assemblies (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table error_upload_assemblies`.execute(db);
  await sql`drop table error_upload_chunks`.execute(db);
}
