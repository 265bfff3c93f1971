/**
 * The channels of an error project: who is paged for its new issues and
 * regressions (src/errors/alerts.ts queues the pages). Set like a monitor's
 * channels: the whole set at once, each an organisation-wide channel or one
 * of the project's workspace, seen through the caller's confinement.
 */
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { audit, diff } from '../domain/audit';
import { channelOut } from '../domain/channels';
import type { Services } from '../pipeline/context';
import { invalid, notFound } from '../pipeline/errors';
import { selectChannels } from '../repo/channels';
import { lockParentForChange } from '../domain/parents';

/** A project the caller can see (its workspace is one of the caller's), or 404. */
async function visibleProject(db: Db, caller: Caller, id: string) {
  let q = db.selectFrom('error_projects').select(['id', 'workspace_id']).where('organization_id', '=', caller.organizationId).where('id', '=', id);
  if (caller.workspaceIds !== null) q = q.where('workspace_id', 'in', caller.workspaceIds.length ? [...caller.workspaceIds] : ['']);
  const row = await q.executeTakeFirst();
  if (!row) throw notFound('error project', 'id');
  return row;
}

/** GET /errors/projects/{id}/channels: the channels paged for the project, by name. */
export async function listProjectChannels(db: Db, services: Pick<Services, 'secrets'>, caller: Caller, projectId: string) {
  await visibleProject(db, caller, projectId);
  const ids = (await db.selectFrom('error_project_channels').select('channel_id').where('project_id', '=', projectId).execute()).map((r) => r.channel_id);
  const rows = await selectChannels(db, { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, ids }).execute();
  return rows.map((r) => channelOut(services, r));
}

/**
 * PUT /errors/projects/{id}/channels: replaces the whole set; null or []
 * pages nobody. Each id must be a channel of the organisation that is
 * organisation-wide or in the project's workspace, else 400 naming
 * `channelIds.<index>` and nothing changes.
 */
export async function setProjectChannels(db: Db, services: Pick<Services, 'secrets'>, caller: Caller, projectId: string, channelIds: readonly string[] | null) {
  const project = await visibleProject(db, caller, projectId);
  const wanted = channelIds ?? [];
  await db.transaction().execute(async (tx) => {
    // One replacement at a time per project; a project deleted since it was read is 404 (src/domain/parents.ts).
    await lockParentForChange(tx, 'error_projects', caller.organizationId, projectId, 'error project', 'id');
    const found = await tx.selectFrom('notification_channels').select(['id', 'workspace_id'])
      .where('organization_id', '=', caller.organizationId).where('id', 'in', wanted.length ? [...wanted] : [''])
      .forShare().execute();
    const usable = new Set(found.filter((c) => c.workspace_id === null || c.workspace_id === project.workspace_id).map((c) => c.id));
    wanted.forEach((cid, i) => {
      if (!usable.has(cid)) throw invalid(`channelIds.${i}`, 'no such channel in this organisation-wide scope or the project\'s workspace', 'unknown_channel');
    });
    const ids = [...new Set(wanted)];
    const before = (await tx.selectFrom('error_project_channels').select('channel_id').where('project_id', '=', projectId).execute()).map((r) => r.channel_id).sort();
    await tx.deleteFrom('error_project_channels').where('project_id', '=', projectId).execute();
    if (ids.length) await tx.insertInto('error_project_channels').values(ids.map((channel_id) => ({ project_id: projectId, channel_id }))).execute();
    const changes = diff({ channelIds: before }, { channelIds: [...ids].sort() }, ['channelIds']);
    if (Object.keys(changes).length) {
      await audit(tx, caller, { action: 'error_project.channels_set', resourceType: 'error_project', resourceId: projectId, workspaceId: project.workspace_id, changes });
    }
  });
  return listProjectChannels(db, services, caller, projectId);
}
