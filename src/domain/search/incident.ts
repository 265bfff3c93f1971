import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/**
 * Incidents by title and by the current name of their monitor (a renamed
 * monitor's incidents keep the title they opened with). Newest first within
 * each rank step.
 */
export const incident: SearchSource = {
  permission: 'incident:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      from: sql`incidents i left join monitors m on m.id = i.monitor_id`,
      visible: sql<boolean>`i.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`i.workspace_id`)}`,
      title: sql<string>`i.title`,
      columns: sql`i.id, i.status || ' · ' || i.severity || ' · ' || to_char(i.started_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI "UTC"') as subtitle, i.workspace_id`,
      others: [{
        field: 'monitorName',
        match: (x) => sql<boolean>`lower(m.name) like lower(${x.contains})`,
        snippet: () => sql<string>`m.name`,
      }],
      newest: sql<Date>`i.started_at`,
    }, t);
    return hitsOf('incident', rows, (id) => `/incidents/${id}`);
  },
};
