/**
 * The channels of an analytics site: who is paged when its traffic drops
 * (docs/analytics.md, "Traffic alerting"). Set like an error project's or a
 * monitor's channels: the whole set at once, each an organisation-wide
 * channel or one of the site's workspace, seen through the caller's
 * confinement.
 */
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { audit, diff } from '../domain/audit';
import { channelOut } from '../domain/channels';
import { workspaceFilter } from '../domain/tenancy';
import type { Services } from '../pipeline/context';
import { invalid, notFound } from '../pipeline/errors';
import { selectChannels } from '../repo/channels';

/** A site the caller can see (its workspace is one of the caller's), or 404. */
async function visibleSite(db: Db, caller: Caller, id: string) {
  let q = db.selectFrom('analytics_sites').select(['id', 'workspace_id']).where('organization_id', '=', caller.organizationId).where('id', '=', id);
  const ws = workspaceFilter(caller.workspaceIds);
  if (ws) q = q.where('workspace_id', 'in', ws);
  const row = await q.executeTakeFirst();
  if (!row) throw notFound('analytics site', 'id');
  return row;
}

/** GET /analytics/{id}/channels: the channels paged for the site, by name. */
export async function listSiteChannels(db: Db, services: Pick<Services, 'secrets'>, caller: Caller, siteId: string) {
  await visibleSite(db, caller, siteId);
  const ids = (await db.selectFrom('analytics_site_channels').select('channel_id').where('site_id', '=', siteId).execute()).map((r) => r.channel_id);
  const rows = await selectChannels(db, { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, ids }).execute();
  return rows.map((r) => channelOut(services, r));
}

/**
 * PUT /analytics/{id}/channels: replaces the whole set; null or [] pages
 * nobody. Each id must be a channel of the organisation that is
 * organisation-wide or in the site's workspace, else 400 naming
 * `channelIds.<index>` and nothing changes.
 */
export async function setSiteChannels(db: Db, services: Pick<Services, 'secrets'>, caller: Caller, siteId: string, channelIds: readonly string[] | null) {
  const site = await visibleSite(db, caller, siteId);
  const wanted = channelIds ?? [];
  await db.transaction().execute(async (tx) => {
    // One replacement at a time per site.
    await tx.selectFrom('analytics_sites').select('id').where('id', '=', siteId).forUpdate().execute();
    const found = await tx.selectFrom('notification_channels').select(['id', 'workspace_id'])
      .where('organization_id', '=', caller.organizationId).where('id', 'in', wanted.length ? [...wanted] : [''])
      .forShare().execute();
    const usable = new Set(found.filter((c) => c.workspace_id === null || c.workspace_id === site.workspace_id).map((c) => c.id));
    wanted.forEach((cid, i) => {
      if (!usable.has(cid)) throw invalid(`channelIds.${i}`, 'no such channel in this organisation-wide scope or the site\'s workspace', 'unknown_channel');
    });
    const ids = [...new Set(wanted)];
    const before = (await tx.selectFrom('analytics_site_channels').select('channel_id').where('site_id', '=', siteId).execute()).map((r) => r.channel_id).sort();
    await tx.deleteFrom('analytics_site_channels').where('site_id', '=', siteId).execute();
    if (ids.length) await tx.insertInto('analytics_site_channels').values(ids.map((channel_id) => ({ site_id: siteId, channel_id }))).execute();
    const changes = diff({ channelIds: before }, { channelIds: [...ids].sort() }, ['channelIds']);
    if (Object.keys(changes).length) {
      await audit(tx, caller, { action: 'analytics_site.channels_set', resourceType: 'analytics_site', resourceId: siteId, workspaceId: site.workspace_id, changes });
    }
  });
  return listSiteChannels(db, services, caller, siteId);
}
