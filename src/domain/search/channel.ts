import { sql } from 'kysely';
import { hitsOf, rankedSearch, type SearchSource } from './source';
import { orgWideOrInWorkspaces } from '../../repo/scope';

/**
 * Notification channels by name, and an `email` channel by its address (an
 * address is no credential and reads show it). Any other kind's target —
 * webhook URLs, bot tokens, routing keys — is never searched: its real value
 * is sealed and `target` holds only the masked form reads show, which the
 * subtitle repeats. Visible as on GET /channels: organisation-wide channels
 * and those of the caller's workspaces.
 */
export const channel: SearchSource = {
  permission: 'notification_channel:read',
  async search(db, caller, t) {
    const rows = await rankedSearch(db, {
      table: ['notification_channels', 'c'],
      visible: sql<boolean>`c.organization_id = ${caller.organizationId}
        and ${orgWideOrInWorkspaces(caller.workspaceIds, sql`c.workspace_id`)}`,
      title: sql<string>`c.name`,
      columns: sql`c.id, c.kind || ' · ' || c.target as subtitle, c.workspace_id`,
      others: [{
        field: 'email',
        match: (x) => sql<boolean>`(c.kind = 'email' and lower(c.target) like lower(${x.contains}))`,
        snippet: () => sql<string>`c.target`,
      }],
    }, t);
    return hitsOf('channel', rows, () => '/channels');
  },
};
