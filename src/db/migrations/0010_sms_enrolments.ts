import { Kysely, sql } from 'kysely';

/**
 * A pending SMS enrolment: the unconfirmed channel it made and the six-digit
 * code sent to the number (stored as a SHA-256), its expiry and the wrong
 * tries so far. One per membership: enrolling again replaces it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('sms_enrolments')
    .addColumn('membership_id', 'text', (c) => c.primaryKey().references('memberships.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
    .addColumn('code_hash', 'bytea', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sms_enrolments').execute();
}
