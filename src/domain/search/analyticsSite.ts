import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/** Analytics sites by name and domain. */
export const analyticsSite: SearchSource = {
  permission: 'monitor:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['analytics_sites', 's'],
      visible: sql<boolean>`s.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`s.workspace_id`)}`,
      title: sql<string>`s.name`,
      columns: sql`s.id, s.domain as subtitle, s.workspace_id`,
      others: [{ field: 'domain', match: (x) => sql<boolean>`lower(s.domain) like lower(${x.contains})`, snippet: () => sql<string>`s.domain` }],
    }, t);
    return hitsOf('analytics_site', rows, (id) => `/analytics/${id}`);
  },
};
