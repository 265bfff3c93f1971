import { Kysely, sql } from 'kysely';

/**
 * `audit_log.actor_user_*`: the person behind an entry's actor, kept as it was
 * when the change was made (an audit log says who made a change even after
 * they left or renamed themselves): for a key, the member who created it;
 * for a session or a person acting outside the API (accepting an
 * invitation), that person; none for the service itself. Earlier entries are
 * filled from what the database still knows (a key's membership, a user's
 * row); those whose key or person is gone keep none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table audit_log add column actor_user_id text, add column actor_user_email text, add column actor_user_name text`.execute(db);
  await sql`update audit_log a set actor_user_id = u.id, actor_user_email = u.email, actor_user_name = u.name
    from users u where a.actor_type = 'user' and u.id = a.actor_id`.execute(db);
  await sql`update audit_log a set actor_user_id = u.id, actor_user_email = u.email, actor_user_name = u.name
    from api_keys k join memberships m on m.id = k.membership_id join users u on u.id = m.user_id
    where a.actor_type = 'api_key' and k.id = a.actor_id`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table audit_log drop column actor_user_id, drop column actor_user_email, drop column actor_user_name`.execute(db);
}
