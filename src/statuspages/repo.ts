import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { notFound } from '../pipeline/errors';
import { workspaceFilter } from '../domain/tenancy';

/** The components of pages, in page order. */
export async function componentsOf(db: Db, pageIds: string[]) {
  if (pageIds.length === 0) return [];
  return db.selectFrom('status_page_components').select(['id', 'page_id', 'monitor_id', 'display_name', 'position'])
    .where('page_id', 'in', pageIds).orderBy('position').orderBy('id').execute();
}

/** The pages the caller may see (organisation and workspace confinement), with their workspace's name. */
export function visiblePages(db: Db, caller: Caller) {
  let q = db.selectFrom('status_pages as p').innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .selectAll('p').select('w.name as workspace_name').where('p.organization_id', '=', caller.organizationId);
  const ws = workspaceFilter(caller.workspaceIds);
  if (ws) q = q.where('p.workspace_id', 'in', ws);
  return q;
}

/** The page `id` if the caller may see it, else 404. */
export async function visiblePage(db: Db, caller: Caller, id: string) {
  const row = await visiblePages(db, caller).where('p.id', '=', id).executeTakeFirst();
  if (!row) throw notFound('status page', 'id');
  return row;
}
