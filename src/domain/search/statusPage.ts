import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/** Status pages by name and slug (never the page password or its hash). */
export const statusPage: SearchSource = {
  permission: 'status_page:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['status_pages', 'p'],
      visible: sql<boolean>`p.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`p.workspace_id`)}`,
      title: sql<string>`p.name`,
      columns: sql`p.id, '/status/' || p.slug || ' · ' || p.visibility as subtitle, p.workspace_id`,
      others: [{ field: 'slug', match: (x) => sql<boolean>`lower(p.slug) like lower(${x.contains})`, snippet: () => sql<string>`p.slug` }],
    }, t);
    return hitsOf('status_page', rows, (id) => `/status-pages/${id}`);
  },
};
