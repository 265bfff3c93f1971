/**
 * A person's organisations (sessions only): the list, and switching the one
 * their sessions act in — for all their sessions at once, as the spec says.
 */
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { notFound } from '../pipeline/errors';

/** The person's organisations with their role and which is active (GET /organizations; /me `organizations`). */
export async function myOrganizations(db: Db, caller: Caller) {
  const rows = await db.selectFrom('memberships as ms').innerJoin('organizations as o', 'o.id', 'ms.organization_id')
    .select(['o.id', 'o.name', 'ms.role']).where('ms.user_id', '=', caller.userId).orderBy('o.name').orderBy('o.id').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, role: r.role, active: r.id === caller.organizationId }));
}

/** PUT /organizations/active: every session of the person acts in `organizationId` from the next request. */
export async function setActiveOrganization(db: Db, caller: Caller, organizationId: string) {
  const m = await db.selectFrom('memberships as ms').innerJoin('organizations as o', 'o.id', 'ms.organization_id')
    .select(['o.id', 'o.name', 'ms.role']).where('ms.user_id', '=', caller.userId).where('ms.organization_id', '=', organizationId).executeTakeFirst();
  if (!m) throw notFound('organization', 'organizationId');
  await db.updateTable('sessions').set({ organization_id: organizationId }).where('user_id', '=', caller.userId).execute();
  return { id: m.id, name: m.name, role: m.role, active: true };
}
