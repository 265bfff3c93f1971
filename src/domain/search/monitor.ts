import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/** Monitors by name and tags (never their config, headers, bodies or heartbeat token). */
export const monitor: SearchSource = {
  permission: 'monitor:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['monitors', 'm'],
      visible: sql<boolean>`m.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`m.workspace_id`)}`,
      title: sql<string>`m.name`,
      columns: sql`m.id, m.kind || ' · ' || case when m.paused then 'paused' else m.status end as subtitle, m.workspace_id`,
      others: [{
        field: 'tags',
        // Tags are stored lower-cased; `search_tags` (migration 0024) joins them for the trigram index.
        match: (x) => sql<boolean>`search_tags(m.tags) like lower(${x.contains})`,
        short: (x) => sql<boolean>`m.tags @> array[lower(${x.text})]`,
        snippet: (x) => sql<string>`array_to_string(array(select g from unnest(m.tags) g where ${x.short ? sql`g = lower(${x.text})` : sql`g like lower(${x.contains})`}), ', ')`,
      }],
    }, t);
    return hitsOf('monitor', rows, (id) => `/monitors/${id}`);
  },
};
