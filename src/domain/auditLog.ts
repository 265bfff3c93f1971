import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { ApiError } from '../pipeline/errors';
import { iso, workspaceFilter } from './tenancy';

/**
 * Audit entries, newest first, `limit` (clamped to 1..200) at a time; pass the
 * previous page's `nextBefore` as `before`. Business plan and above.
 */
export async function listAudit(db: Db, caller: Caller, query: { limit?: number; before?: string }) {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 200);
  // The entries the caller sees: its organisation's, and for a confined caller its workspaces' only.
  const visible = () => {
    let v = db.selectFrom('audit_log').where('organization_id', '=', caller.organizationId);
    const ws = workspaceFilter(caller.workspaceIds);
    if (ws) v = v.where('workspace_id', 'in', ws);
    return v;
  };
  let q = visible().selectAll();
  if (query.before) {
    // A cursor the caller could not have been given (another workspace's entry) is as unknown as a made-up one.
    const cursor = await visible().select('seq').where('id', '=', query.before).executeTakeFirst();
    if (!cursor) throw new ApiError(400, 'invalid_cursor', 'The before cursor is not one this organisation was given.', { field: 'before' }, [{ field: 'before', reason: 'unknown cursor' }]);
    q = q.where('seq', '<', cursor.seq);
  }
  const rows = await q.orderBy('seq', 'desc').limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  return {
    data: page.map((r) => ({
      id: r.id, at: iso(r.at)!, action: r.action, resourceType: r.resource_type, resourceId: r.resource_id, workspaceId: r.workspace_id,
      actor: {
        type: r.actor_type as 'user' | 'api_key' | 'system', id: r.actor_id, name: r.actor_name,
        // The person behind a key or a session, as recorded with the entry.
        user: r.actor_user_id ? { id: r.actor_user_id, email: r.actor_user_email ?? '', name: r.actor_user_name } : null,
      },
      changes: r.changes,
    })),
    nextBefore: rows.length > limit ? page[page.length - 1].id : null,
  };
}
