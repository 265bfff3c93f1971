import { sql } from 'kysely';
import { reachVisibleSql } from '../../auth/confinement';
import { hitsOf, rankedSearch, type SearchSource } from './source';

/** Members by e-mail address and name; the hit's id is the membership's. Members the caller sees on GET /members (a confined caller: those reaching its workspaces). */
export const member: SearchSource = {
  permission: 'member:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['memberships', 'ms'],
      joins: sql`join users u on u.id = ms.user_id`,
      visible: sql<boolean>`ms.organization_id = ${caller.organizationId} and ${reachVisibleSql(caller, sql`ms.workspace_ids`)}`,
      filterJoins: true,
      title: sql<string>`u.email`,
      columns: sql`ms.id, concat_ws(' · ', u.name, ms.role) as subtitle, null::text as workspace_id`,
      others: [{ field: 'name', match: (x) => sql<boolean>`lower(u.name) like lower(${x.contains})`, snippet: () => sql<string>`u.name` }],
    }, t);
    return hitsOf('member', rows, () => '/members');
  },
};
