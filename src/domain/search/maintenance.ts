import { sql } from 'kysely';
import { hitsOf, inWorkspaces, rankedSearch, type SearchSource } from './source';

/** Maintenance windows by title (incident:read, as GET /maintenance). */
export const maintenance: SearchSource = {
  permission: 'incident:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['maintenance_windows', 'w'],
      visible: sql<boolean>`w.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`w.workspace_id`)}`,
      title: sql<string>`w.title`,
      columns: sql`w.id, to_char(w.starts_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI "UTC"')
        || case when w.recurrence_rule is null then '' else ' · ' || w.recurrence_rule end as subtitle, w.workspace_id`,
    }, t);
    return hitsOf('maintenance', rows, () => '/maintenance');
  },
};
