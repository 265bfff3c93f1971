import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/** Error projects by name and platform (never the DSN's key). */
export const errorProject: SearchSource = {
  permission: 'monitor:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['error_projects', 'p'],
      visible: sql<boolean>`p.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`p.workspace_id`)}`,
      title: sql<string>`p.name`,
      columns: sql`p.id, p.platform as subtitle, p.workspace_id`,
      others: [{ field: 'platform', match: (x) => sql<boolean>`lower(p.platform) like lower(${x.contains})`, snippet: () => sql<string>`p.platform` }],
    }, t);
    return hitsOf('error_project', rows, () => '/errors/projects');
  },
};
