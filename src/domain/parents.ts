/**
 * Locks of the parent a write hangs from, taken inside the write's own
 * transaction, so that a write racing a delete of its parent answers a clean
 * 404 instead of failing on the foreign key.
 *
 * FOR KEY SHARE is what the foreign-key check itself takes, so it blocks
 * nothing that check would not: other children may be added at the same
 * time, updates of the parent's other columns go on, and only a delete of the
 * parent waits for the write to commit (and then removes the new child with
 * the rest). A delete that committed first leaves no row to lock: the write
 * stops with the 404 its own pre-check would have given a moment later.
 *
 * Lock order, to stay clear of deadlocks: the parent before anything of the
 * organisation (creates serialise per organisation with FOR NO KEY UPDATE,
 * which does not conflict with the KEY SHARE that every audit entry's
 * foreign key takes of the organisation row).
 */
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { notFound } from '../pipeline/errors';

/** Parent tables a write may hang from (each has `id` and `organization_id`). */
export type ParentTable = 'workspaces' | 'monitors' | 'hosts' | 'status_pages' | 'error_projects' | 'analytics_sites' | 'notification_channels';

/**
 * Locks the row `id` of `table` in `organizationId` FOR KEY SHARE within
 * `tx`, or throws 404 naming `what` and `field` when it is gone.
 */
export async function lockParent(tx: Db, table: ParentTable, organizationId: string, id: string, what: string, field: string): Promise<void> {
  const { rows } = await sql<{ id: string }>`select id from ${sql.table(table)} where id = ${id} and organization_id = ${organizationId} for key share`.execute(tx);
  if (!rows.length) throw notFound(what, field);
}

/**
 * Locks the row `id` of `table` in `organizationId` FOR NO KEY UPDATE within
 * `tx` — writers of the same row's children take turns (replacing a set of
 * links, numbering components), a delete waits, foreign-key checks of other
 * children do not — or throws 404 naming `what` and `field` when it is gone.
 */
export async function lockParentForChange(tx: Db, table: ParentTable, organizationId: string, id: string, what: string, field: string): Promise<void> {
  const { rows } = await sql<{ id: string }>`select id from ${sql.table(table)} where id = ${id} and organization_id = ${organizationId} for no key update`.execute(tx);
  if (!rows.length) throw notFound(what, field);
}

/**
 * Serialises the creates of one organisation (caps, slugs and names checked
 * before the insert hold under concurrency) without blocking the KEY SHARE
 * locks that inserts referring to the organisation take — audit entries among
 * them, which every delete writes after locking its own row.
 */
export async function serialiseCreates(tx: Db, organizationId: string): Promise<void> {
  await tx.selectFrom('organizations').select('id').where('id', '=', organizationId).forNoKeyUpdate().execute();
}
