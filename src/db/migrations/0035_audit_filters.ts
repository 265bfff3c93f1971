import { Kysely, sql } from 'kysely';

/**
 * Indexes for the filters of `GET /audit` (actor, action, resourceType,
 * resourceId, from/to). Without them a filter on a rare value walks the
 * organisation's whole log backwards through `audit_log_org_seq_idx`, reading
 * every entry until a page of matches is found. Each index leads with the
 * organisation (every read is tenant-filtered) and ends with `seq`, the
 * cursor's order, so an equality filter reads only its matches, newest first,
 * and stops after a page; a comma list or two filters combine by bitmap.
 * The actor filter matches `actor_id` or `actor_user_id` (a person's own
 * changes and those of their keys): one index each, OR-ed by the planner.
 * The log is written rarely (configuration changes), so the extra indexes
 * cost little. Partial where the column may be null: those rows never match.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index audit_log_org_action_seq_idx on audit_log (organization_id, action, seq)`.execute(db);
  await sql`create index audit_log_org_resource_type_seq_idx on audit_log (organization_id, resource_type, seq)`.execute(db);
  await sql`create index audit_log_org_resource_id_seq_idx on audit_log (organization_id, resource_id, seq) where resource_id is not null`.execute(db);
  await sql`create index audit_log_org_actor_seq_idx on audit_log (organization_id, actor_id, seq) where actor_id is not null`.execute(db);
  await sql`create index audit_log_org_actor_user_seq_idx on audit_log (organization_id, actor_user_id, seq) where actor_user_id is not null`.execute(db);
  await sql`create index audit_log_org_at_idx on audit_log (organization_id, at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const i of ['audit_log_org_action_seq_idx', 'audit_log_org_resource_type_seq_idx', 'audit_log_org_resource_id_seq_idx',
    'audit_log_org_actor_seq_idx', 'audit_log_org_actor_user_seq_idx', 'audit_log_org_at_idx']) {
    await sql`drop index if exists ${sql.id(i)}`.execute(db);
  }
}
