/**
 * Error projects: what applications report errors to. Each has a DSN
 * `{scheme}://{publicKey}@{host}/{ref}` built from the base URL; `ref` comes
 * from its own sequence (never reused), `publicKey` is 32 random hex
 * characters (public by design: it ships inside applications). Confined keys
 * see their workspaces' projects only.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { audit, diff } from '../domain/audit';
import { iso, visibleWorkspace } from '../domain/tenancy';
import type { Services } from '../pipeline/context';
import { invalid, notFound } from '../pipeline/errors';
import { lockParent } from '../domain/parents';

const AUDITED = ['name', 'platform', 'workspaceId'];

/** The DSN of a project under `baseUrl` (its path prefix kept, as SDKs do). */
export function dsnOf(baseUrl: string, publicKey: string, ref: string | number): string {
  const u = new URL(baseUrl);
  return `${u.protocol}//${publicKey}@${u.host}${u.pathname.replace(/\/+$/, '')}/${ref}`;
}

type Row = { id: string; workspace_id: string; ref: string; public_key: string; name: string; platform: string | null; created_at: Date; unresolved?: number | string; events24h?: number | string };

function projectOut(services: Services, r: Row) {
  return {
    id: r.id, workspaceId: r.workspace_id, ref: Number(r.ref), name: r.name, platform: r.platform, publicKey: r.public_key,
    dsn: dsnOf(services.baseUrl(), r.public_key, r.ref), unresolved: Number(r.unresolved ?? 0), eventsLast24h: Number(r.events24h ?? 0),
    createdAt: iso(r.created_at)!,
  };
}

function visible(db: Db, caller: Caller) {
  let q = db.selectFrom('error_projects as p').where('p.organization_id', '=', caller.organizationId);
  if (caller.workspaceIds !== null) q = q.where('p.workspace_id', 'in', caller.workspaceIds.length ? [...caller.workspaceIds] : ['']);
  return q;
}

/** GET /errors/projects: by name, with events of the last 24 hours (issues come with grouping). */
export async function listProjects(db: Db, services: Services, caller: Caller) {
  const rows = await visible(db, caller)
    .select(['p.id', 'p.workspace_id', 'p.ref', 'p.public_key', 'p.name', 'p.platform', 'p.created_at',
      sql<string>`(select count(*) from error_events e where e.project_id = p.id and e.received_at > now() - interval '24 hours')`.as('events24h'),
      sql<string>`(select count(*) from error_issues i where i.project_id = p.id and (i.status = 'unresolved' or (i.status = 'ignored' and i.ignored_until <= now())))`.as('unresolved')])
    .orderBy('p.name').orderBy('p.id').execute();
  return rows.map((r) => projectOut(services, r));
}

async function findProject(db: Db, caller: Caller, id: string) {
  const row = await visible(db, caller).selectAll('p').where('p.id', '=', id).executeTakeFirst();
  if (!row) throw notFound('error project', 'id');
  return row;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (!n) throw invalid('name', 'must not be blank');
  return n;
}

/** POST /errors/projects. */
export async function createProject(db: Db, services: Services, caller: Caller, body: { name: string; workspaceId: string; platform?: string | null }) {
  const ws = await visibleWorkspace(db, caller, body.workspaceId);
  const name = cleanName(body.name);
  const platform = body.platform?.trim() || null;
  const id = newId('prj');
  await db.transaction().execute(async (tx) => {
    // The workspace may have been deleted since it was read: 404, never a foreign-key failure.
    await lockParent(tx, 'workspaces', caller.organizationId, ws.id, 'workspace', 'workspaceId');
    await tx.insertInto('error_projects').values({ id, organization_id: caller.organizationId, workspace_id: ws.id, public_key: randomBytes(16).toString('hex'), name, platform }).execute();
    await audit(tx, caller, { action: 'error_project.created', resourceType: 'error_project', resourceId: id, workspaceId: ws.id, changes: diff(null, { name, platform, workspaceId: ws.id }, AUDITED) });
  });
  return projectOut(services, await findProject(db, caller, id));
}

/** PATCH /errors/projects/{id}. */
export async function updateProject(db: Db, services: Services, caller: Caller, id: string, body: { name?: string; platform?: string | null }) {
  const before = await findProject(db, caller, id);
  const set: { name?: string; platform?: string | null } = {};
  if (body.name !== undefined) set.name = cleanName(body.name);
  if (body.platform !== undefined) set.platform = body.platform?.trim() || null;
  await db.transaction().execute(async (tx) => {
    const updated = await tx.updateTable('error_projects').set(set).where('id', '=', id).where('organization_id', '=', caller.organizationId)
      .returning('id').executeTakeFirst();
    // Deleted since it was read: nothing to change or record.
    if (!updated) throw notFound('error project', 'id');
    await audit(tx, caller, { action: 'error_project.updated', resourceType: 'error_project', resourceId: id, workspaceId: before.workspace_id,
      changes: diff({ name: before.name, platform: before.platform }, { name: set.name ?? before.name, platform: set.platform === undefined ? before.platform : set.platform }, AUDITED) });
  });
  return projectOut(services, await findProject(db, caller, id));
}

/** DELETE /errors/projects/{id}: with its events; the DSN stops being accepted at once. */
export async function deleteProject(db: Db, caller: Caller, id: string) {
  const before = await findProject(db, caller, id);
  await db.transaction().execute(async (tx) => {
    const gone = await tx.deleteFrom('error_projects').where('id', '=', id).where('organization_id', '=', caller.organizationId).executeTakeFirst();
    // Deleted meanwhile by another request: that one recorded it.
    if (!Number(gone.numDeletedRows)) throw notFound('error project', 'id');
    await audit(tx, caller, { action: 'error_project.deleted', resourceType: 'error_project', resourceId: id, workspaceId: before.workspace_id,
      changes: diff({ name: before.name, platform: before.platform, workspaceId: before.workspace_id }, null, AUDITED) });
  });
  return { id, deleted: true as const };
}
