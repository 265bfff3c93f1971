import { sql } from 'kysely';
import { hitsOf, rankedSearch, type SearchSource } from './source';

/** Private probes by name and the hostname they report (never their token's hash); organisation-wide, as GET /probes. */
export const probe: SearchSource = {
  permission: 'agent:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['probes', 'p'],
      visible: sql<boolean>`p.organization_id = ${caller.organizationId}`,
      title: sql<string>`p.name`,
      columns: sql`p.id, concat_ws(' · ', p.hostname, p.version, case when p.revoked_at is not null then 'revoked' end) as subtitle, null::text as workspace_id`,
      others: [{ field: 'hostname', match: (x) => sql<boolean>`lower(p.hostname) like lower(${x.contains})`, snippet: () => sql<string>`p.hostname` }],
    }, t);
    return hitsOf('probe', rows, () => '/probes');
  },
};
