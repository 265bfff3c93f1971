import { Kysely, sql } from 'kysely';

/**
 * Billing: one subscription per organisation (where it comes from, its plan,
 * status, period, cancellation, add-on packs, the processor's ids), receipts,
 * and the ids of processed webhook events (each is applied once). The
 * organisation's `plan` and `add_on_packs` are what entitlements read; the
 * subscription keeps them in step.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('organizations').addColumn('add_on_packs', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createTable('subscriptions')
    .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('cadence', 'text')
    .addColumn('current_period_end', 'timestamptz')
    .addColumn('cancel_at', 'timestamptz')
    .addColumn('add_on_packs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('external_customer_id', 'text')
    .addColumn('external_subscription_id', 'text', (c) => c.unique())
    // The processor's time of the last event applied: an older event arriving late changes nothing.
    .addColumn('event_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createTable('receipts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text', (c) => c.notNull().unique())
    .addColumn('amount_cents', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'timestamptz', (c) => c.notNull())
    .addColumn('url', 'text')
    .execute();
  await db.schema.createIndex('receipts_org').on('receipts').columns(['organization_id', 'issued_at']).execute();
  await db.schema.createTable('billing_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('billing_events').execute();
  await db.schema.dropTable('receipts').execute();
  await db.schema.dropTable('subscriptions').execute();
  await db.schema.alterTable('organizations').dropColumn('add_on_packs').execute();
}
