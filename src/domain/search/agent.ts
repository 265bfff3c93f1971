import { sql } from 'kysely';
import { hitsOf, rankedSearch, type SearchSource } from './source';
import { orgWideOrInWorkspaces } from '../../repo/scope';

/**
 * Server agents by name and the hostname they report (never their token's
 * hash). Visible as on GET /agents: organisation-wide agents and those of
 * the caller's workspaces.
 */
export const agent: SearchSource = {
  permission: 'agent:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['agents', 'a'],
      visible: sql<boolean>`a.organization_id = ${caller.organizationId}
        and ${orgWideOrInWorkspaces(caller.workspaceIds, sql`a.workspace_id`)}`,
      title: sql<string>`a.name`,
      columns: sql`a.id, concat_ws(' · ', a.hostname, a.os, a.version) as subtitle, a.workspace_id`,
      others: [{ field: 'hostname', match: (x) => sql<boolean>`lower(a.hostname) like lower(${x.contains})`, snippet: () => sql<string>`a.hostname` }],
    }, t);
    return hitsOf('agent', rows, () => '/agents');
  },
};
