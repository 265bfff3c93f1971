import { sql } from 'kysely';
import { hitsOf, rankedSearch, type SearchSource } from './source';

/** Hosts by name and address. Hosts belong to the organisation: a confined key sees them all, as on GET /hosts. */
export const host: SearchSource = {
  permission: 'monitor:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['hosts', 'h'],
      visible: sql<boolean>`h.organization_id = ${caller.organizationId}`,
      title: sql<string>`h.name`,
      columns: sql`h.id, nullif(concat_ws(' · ', h.provider, h.address), '') as subtitle, null::text as workspace_id`,
      others: [{ field: 'address', match: (x) => sql<boolean>`lower(h.address) like lower(${x.contains})`, snippet: () => sql<string>`h.address` }],
    }, t);
    return hitsOf('host', rows, (id) => `/hosts/${id}`);
  },
};
