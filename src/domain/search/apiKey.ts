import { sql } from 'kysely';
import { keyReachSql, reachVisibleSql } from '../../auth/confinement';
import { hitsOf, rankedSearch, type SearchSource } from './source';

/**
 * API keys by name and prefix (the prefix is shown by GET /api-keys; the
 * token is never stored and its hash never searched). Owners and admins find
 * every key of the organisation, other roles their own, as on GET /api-keys (a confined caller: keys reaching its workspaces).
 */
export const apiKey: SearchSource = {
  permission: 'api_key:read',
  async search(db, caller, t) {
    const all = caller.role === 'owner' || caller.role === 'admin';
    const rows = await rankedSearch(db, {
      table: ['api_keys', 'k'],
      joins: sql`join memberships ms on ms.id = k.membership_id`,
      filterJoins: true,
      visible: sql<boolean>`k.organization_id = ${caller.organizationId} and ${all ? sql`true` : sql`k.membership_id = ${caller.membershipId}`}
        and ${reachVisibleSql(caller, keyReachSql(sql`k.workspace_ids`, sql`ms.workspace_ids`))}`,
      title: sql<string>`k.name`,
      columns: sql`k.id, k.prefix || case when k.revoked_at is not null then ' · revoked' when k.expires_at <= now() then ' · expired' else '' end as subtitle,
        null::text as workspace_id`,
      others: [{
        field: 'prefix',
        match: (x) => sql<boolean>`lower(k.prefix) like lower(${x.contains})`,
        short: (x) => sql<boolean>`starts_with(lower(k.prefix), lower(${x.text}))`,
        snippet: () => sql<string>`k.prefix`,
      }],
    }, t);
    return hitsOf('api_key', rows, () => '/api-keys');
  },
};
