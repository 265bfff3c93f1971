import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { notFound } from '../pipeline/errors';

export { workspaceFilter } from '../repo/scope';

/**
 * Resolves a workspace id the caller named; anything outside the caller's
 * organisation or confinement answers 404, exactly like a missing row.
 */
export async function visibleWorkspace(db: Db, caller: Caller, id: string, field = 'workspaceId') {
  if (caller.workspaceIds !== null && !caller.workspaceIds.includes(id)) throw notFound('workspace', field);
  const ws = await db.selectFrom('workspaces').selectAll()
    .where('organization_id', '=', caller.organizationId).where('id', '=', id).executeTakeFirst();
  if (!ws) throw notFound('workspace', field);
  return ws;
}

/** Lower-cases, trims and de-duplicates tags, keeping their order. */
export function normaliseTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()))];
}

/** The longest tag accepted; longer entries in a tag filter are dropped. */
export const MAX_TAG_LENGTH = 64;

/** ISO string of a timestamp column, or null. */
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}
