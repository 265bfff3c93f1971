import type { Db } from '../db/connect';

/** The organisation row and its plan, or undefined. */
export function findOrganization(db: Db, id: string) {
  return db.selectFrom('organizations as o').innerJoin('plans as p', 'p.code', 'o.plan')
    .select(['o.id', 'o.name', 'o.plan', 'o.created_at', 'o.setup_dismissed_at', 'p.name as plan_name'])
    .where('o.id', '=', id).executeTakeFirst();
}

/** The plan named `code`, or undefined. */
export function findPlan(db: Db, code: string) {
  return db.selectFrom('plans').selectAll().where('code', '=', code).executeTakeFirst();
}

/** The user with this e-mail address (case-insensitive), or undefined. */
export function findUserByEmail(db: Db, email: string) {
  return db.selectFrom('users').selectAll().where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase())).executeTakeFirst();
}

/** True when no organisation exists yet (first start). */
export async function isEmpty(db: Db): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('id').limit(1).executeTakeFirst();
  return !row;
}
