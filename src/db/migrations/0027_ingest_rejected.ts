import { Kysely, sql } from 'kysely';

/**
 * `ingest_rejected`: items a background loop could not process even alone
 * (src/jobs/loop.ts sets one aside after its batch has been halved down to
 * that item and it still failed), kept whole as JSON with the error, so one
 * item that always fails neither blocks the work behind it nor is lost.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table ingest_rejected (
    id bigint generated always as identity primary key,
    source text not null,
    item json not null,
    error text not null,
    rejected_at timestamptz not null default now()
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ingest_rejected').execute();
}
