import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/** Error issues by title and culprit; confined by their project's workspace, as GET /errors/issues. */
export const errorIssue: SearchSource = {
  permission: 'monitor:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['error_issues', 'i'],
      joins: sql`join error_projects p on p.id = i.project_id`,
      visible: caller.workspaceIds === null
        ? sql<boolean>`i.organization_id = ${caller.organizationId}`
        : sql<boolean>`i.organization_id = ${caller.organizationId}
          and i.project_id in (select id from error_projects where organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`workspace_id`)})`,
      title: sql<string>`i.title`,
      columns: sql`i.id, p.name || ' · ' || case when i.status = 'ignored' and i.ignored_until <= now() then 'unresolved' else i.status end as subtitle,
        p.workspace_id`,
      others: [{ field: 'culprit', match: (x) => sql<boolean>`lower(i.culprit) like lower(${x.contains})`, snippet: () => sql<string>`i.culprit` }],
    }, t);
    return hitsOf('error_issue', rows, (id) => `/errors/issues/${id}`);
  },
};
