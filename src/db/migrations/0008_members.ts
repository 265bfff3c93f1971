import { Kysely, sql } from 'kysely';

/**
 * People: a password for a person (a slow scrypt hash, set when they accept
 * an invitation or by the operator's CLI), and invitations — an address, the
 * role and workspaces it will get, and a one-time link stored as a SHA-256.
 * One pending invitation per organisation and address: inviting again
 * replaces it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users')
    .addColumn('password_hash', 'text')
    .addColumn('password_changed_at', 'timestamptz')
    .execute();
  await db.schema.createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('workspace_ids', sql`text[]`)
    .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('invited_by_membership_id', 'text', (c) => c.references('memberships.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create unique index invitations_org_email on invitations (organization_id, lower(email))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('invitations').execute();
  await db.schema.alterTable('users').dropColumn('password_hash').dropColumn('password_changed_at').execute();
}
