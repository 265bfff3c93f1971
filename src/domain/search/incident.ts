import { sql } from 'kysely';
import { CANDIDATES, hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/**
 * Incidents by title and by the current name of their monitor (a renamed
 * monitor's incidents keep the title they opened with). Newest first within
 * each rank step.
 */
export const incident: SearchSource = {
  permission: 'incident:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['incidents', 'i'],
      // Lateral with offset 0: one index lookup per candidate, never a hash of every monitor.
      joins: sql`left join lateral (select m.name from monitors m where m.id = i.monitor_id offset 0) m on true`,
      visible: sql<boolean>`i.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`i.workspace_id`)}`,
      title: sql<string>`i.title`,
      columns: sql`i.id, i.status || ' · ' || i.severity || ' · ' || to_char(i.started_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI "UTC"') as subtitle, i.workspace_id`,
      others: [{
        field: 'monitorName',
        // Through the first monitors the trigram index finds (the incidents' own columns only: see `visible`).
        with: (x) => sql`monitor_hits as materialized (select id from (with mm as materialized (select id from monitors
          where organization_id = ${caller.organizationId} and lower(name) like lower(${x.contains})) select id from mm limit ${CANDIDATES}) x)`,
        match: () => sql<boolean>`i.monitor_id in (select id from monitor_hits)`,
        test: (x) => sql<boolean>`lower(m.name) like lower(${x.contains})`,
        snippet: () => sql<string>`m.name`,
      }],
      newest: sql<Date>`i.started_at`,
    }, t);
    return hitsOf('incident', rows, (id) => `/incidents/${id}`);
  },
};
