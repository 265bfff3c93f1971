import { Kysely, sql } from 'kysely';

/**
 * Monitors are updated twice a check (lease, then result): room on each page
 * for in-place (HOT) updates, and vacuum/analyze long before the defaults
 * would, so the due-work index stays cheap to scan.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table monitors set (fillfactor = 75, autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table monitors reset (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor)`.execute(db);
}
