import { sql } from 'kysely';
import { reachVisibleSql } from '../../auth/confinement';
import { hitsOf, rankedSearch, type SearchSource } from './source';

/** Pending invitations (not expired, and as GET /members shows them to the caller) by e-mail address; never their token's hash. */
export const invitation: SearchSource = {
  permission: 'member:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['invitations', 'i'],
      visible: sql<boolean>`i.organization_id = ${caller.organizationId} and i.expires_at > now() and ${reachVisibleSql(caller, sql`i.workspace_ids`)}`,
      title: sql<string>`i.email`,
      columns: sql`i.id, 'invited · ' || i.role as subtitle, null::text as workspace_id`,
    }, t);
    return hitsOf('invitation', rows, () => '/members');
  },
};
