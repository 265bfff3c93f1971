import { Kysely, sql } from 'kysely';

/**
 * Error events are stored as the SDK sent them (`json`, not `jsonb`): nothing
 * queries inside a payload, `json` takes a 10 KB event in less than half the
 * CPU of `jsonb`, and it keeps strings `jsonb` refuses (`\u0000`), which
 * would otherwise sink a whole group-commit batch.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table error_events alter column payload type json using payload::json`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table error_events alter column payload type jsonb using payload::jsonb`.execute(db);
}
