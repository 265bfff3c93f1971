import { sql } from 'kysely';
import { hitsOf, rankedSearch, type SearchSource } from './source';

/**
 * Server agents by name and the hostname they report (never their token's
 * hash). Visible as on GET /agents: organisation-wide agents and those of
 * the caller's workspaces.
 */
export const agent: SearchSource = {
  permission: 'agent:read',
  async search(db, caller, t) {
    const ws = caller.workspaceIds;
    const rows = await rankedSearch(db, {
      table: ['agents', 'a'],
      visible: sql<boolean>`a.organization_id = ${caller.organizationId}
        and ${ws === null ? sql`true` : sql`(a.workspace_id is null or a.workspace_id = any(${[...ws]}::text[]))`}`,
      title: sql<string>`a.name`,
      columns: sql`a.id, concat_ws(' · ', a.hostname, a.os, a.version) as subtitle, a.workspace_id`,
      others: [{ field: 'hostname', match: (x) => sql<boolean>`lower(a.hostname) like lower(${x.contains})`, snippet: () => sql<string>`a.hostname` }],
    }, t);
    return hitsOf('agent', rows, () => '/agents');
  },
};
