import { Kysely } from 'kysely';

/** Monitor reads look up each monitor's unresolved incident. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('incidents_monitor_status_idx').on('incidents').columns(['monitor_id', 'status']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('incidents_monitor_status_idx').execute();
}
