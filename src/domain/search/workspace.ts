import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/** Workspaces by name, slug and client reference; a confined key finds only its own. */
export const workspace: SearchSource = {
  permission: 'workspace:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['workspaces', 'w'],
      visible: sql<boolean>`w.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`w.id`)}`,
      title: sql<string>`w.name`,
      columns: sql`w.id, w.slug || case when w.client_reference is null then '' else ' · ' || w.client_reference end as subtitle, w.id as workspace_id`,
      others: [
        { field: 'slug', match: (x) => sql<boolean>`lower(w.slug) like lower(${x.contains})`, snippet: () => sql<string>`w.slug` },
        { field: 'clientReference', match: (x) => sql<boolean>`lower(w.client_reference) like lower(${x.contains})`, snippet: () => sql<string>`w.client_reference` },
      ],
    }, t);
    return hitsOf('workspace', rows, () => '/workspaces');
  },
};
