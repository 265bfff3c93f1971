import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { ApiError, conflict, invalid, notFound } from '../pipeline/errors';
import type { WorkspacesTable } from '../db/schema';
import type { Selectable } from 'kysely';
import { audit, diff } from './audit';
import { iso, visibleWorkspace, workspaceFilter } from './tenancy';
import { releaseDependants } from '../engine/incidents';
import { serialiseCreates } from './parents';

type Row = Selectable<WorkspacesTable>;

/** The API shape of a workspace. */
export function workspaceOut(w: Row) {
  return { id: w.id, name: w.name, slug: w.slug, clientReference: w.client_reference, isDefault: w.is_default, createdAt: iso(w.created_at)! };
}

function checkName(name: string): string {
  const n = name.trim();
  const chars = [...n].length; // code points, as the contract's maxLength counts them
  if (chars < 1 || chars > 80) throw invalid('name', 'must be 1 to 80 characters');
  return n;
}

/** A URL-safe slug from a name: lower-case ASCII words joined by hyphens. */
export function slugify(name: string): string {
  const s = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  return s || 'workspace';
}

/** Workspaces the caller can see, the default first. */
export async function listWorkspaces(db: Db, caller: Caller) {
  let q = db.selectFrom('workspaces').selectAll().where('organization_id', '=', caller.organizationId);
  const ws = workspaceFilter(caller.workspaceIds);
  if (ws) q = q.where('id', 'in', ws);
  const rows = await q.orderBy('is_default', 'desc').orderBy('created_at').orderBy('id').execute();
  return rows.map(workspaceOut);
}

/** Creates a workspace; its slug is derived from the name once and never changes. */
export async function createWorkspace(db: Db, caller: Caller, input: { name: string; clientReference?: string | null }) {
  requireWholeOrganisation(caller, 'workspace:update', 'create a workspace');
  const name = checkName(input.name);
  return db.transaction().execute(async (tx) => {
    // Creates in one organisation take turns, so two of the same name get distinct slugs.
    await serialiseCreates(tx, caller.organizationId);
    const base = slugify(name);
    const taken = new Set((await tx.selectFrom('workspaces').select('slug').where('organization_id', '=', caller.organizationId)
      .where('slug', 'like', `${base}%`).execute()).map((r) => r.slug));
    let slug = base;
    for (let i = 2; taken.has(slug); i++) slug = `${base}-${i}`;
    const row = await tx.insertInto('workspaces').values({
      id: newId('ws'), organization_id: caller.organizationId, name, slug, client_reference: input.clientReference ?? null, is_default: false,
    }).returningAll().executeTakeFirstOrThrow();
    const out = workspaceOut(row);
    await audit(tx, caller, { action: 'workspace.created', resourceType: 'workspace', resourceId: row.id, workspaceId: row.id,
      changes: diff(null, out, ['name', 'slug', 'clientReference']) });
    return out;
  });
}

/** Renames a workspace and sets or clears its client reference; the slug stays. */
export async function updateWorkspace(db: Db, caller: Caller, id: string, input: { name: string; clientReference?: string | null }) {
  const before = workspaceOut(await visibleWorkspace(db, caller, id, 'id'));
  const name = checkName(input.name);
  const set: { name: string; client_reference?: string | null } = { name };
  // Missing leaves it unchanged; null or an empty string clears it (UpdateWorkspaceBody).
  if (input.clientReference !== undefined) set.client_reference = input.clientReference === '' ? null : input.clientReference;
  return db.transaction().execute(async (tx) => {
    const row = await tx.updateTable('workspaces').set(set).where('id', '=', id).where('organization_id', '=', caller.organizationId)
      .returningAll().executeTakeFirst();
    // Deleted since it was read.
    if (!row) throw notFound('workspace', 'id');
    const out = workspaceOut(row);
    const changes = diff(before, out, ['name', 'clientReference']);
    if (Object.keys(changes).length) {
      await audit(tx, caller, { action: 'workspace.updated', resourceType: 'workspace', resourceId: id, workspaceId: id, changes });
    }
    return out;
  });
}

/** Deletes a workspace and everything in it; the default workspace is refused. */
export async function deleteWorkspace(db: Db, caller: Caller, id: string) {
  const ws = await visibleWorkspace(db, caller, id, 'id');
  // Deleting a workspace ends the confinement of every person and key confined to it: an organisation-level change.
  requireWholeOrganisation(caller, 'workspace:update', 'delete a workspace');
  if (ws.is_default) throw conflict('default_workspace', 'The default workspace cannot be deleted.', { workspaceId: id }, 'id');
  await db.transaction().execute(async (tx) => {
    // Monitors elsewhere that depended on one of these, and their outages, stand on their own from now on.
    const doomed = await tx.selectFrom('monitors').select('id').where('workspace_id', '=', id).execute();
    for (const m of doomed) await releaseDependants(tx, caller.organizationId, m.id);
    // Raw results carry no foreign key (partitioned): they go with their monitors explicitly.
    await tx.deleteFrom('check_results').where('monitor_id', 'in', tx.selectFrom('monitors').select('id').where('workspace_id', '=', id)).execute();
    const gone = await tx.deleteFrom('workspaces').where('id', '=', id).where('organization_id', '=', caller.organizationId).executeTakeFirst();
    // Deleted meanwhile by another request: that one recorded it.
    if (!Number(gone.numDeletedRows)) throw notFound('workspace', 'id');
    await audit(tx, caller, { action: 'workspace.deleted', resourceType: 'workspace', resourceId: id, workspaceId: id,
      changes: diff(workspaceOut(ws), null, ['name', 'slug']) });
  });
  return { id, deleted: true as const };
}
