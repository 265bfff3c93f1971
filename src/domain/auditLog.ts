import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { ApiError } from '../pipeline/errors';
import { iso, workspaceFilter } from './tenancy';

/** The query of `GET /audit`: a page size, a cursor and the filters (contract: openapi.yaml, listAuditEntries). */
export interface AuditQuery {
  limit?: number;
  before?: string;
  actor?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  from?: string;
  to?: string;
}

/** Items a comma list may hold: enough for any filter a person builds, bounded so one read stays one cheap query. */
const MAX_ITEMS = 20;
/** Ids of users, keys and what the service names as itself (`confirmation_link`). */
const ID = /^[A-Za-z0-9_.:@+-]+$/;
/** `<resourceType>.<verb>`, as every action is written. */
const ACTION = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;
const RESOURCE_TYPE = /^[a-z][a-z0-9_]*$/;

function refused(field: string, reason: string): ApiError {
  return new ApiError(400, 'invalid_query', `Invalid query parameter ${field}: ${reason}.`, { field }, [{ field, reason }]);
}

/** A comma list of exact values (empty = no filter), each matching `shape`. */
function list(field: string, value: string | undefined, shape: RegExp, what: string): string[] | null {
  if (value === undefined || value === '') return null;
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw refused(field, 'has an empty item (a comma list needs a value between commas)');
  if (items.length > MAX_ITEMS) throw refused(field, `has ${items.length} items; at most ${MAX_ITEMS}`);
  const bad = items.find((s) => !shape.test(s));
  if (bad !== undefined) throw refused(field, `${JSON.stringify(bad.slice(0, 64))} is not ${what}`);
  return [...new Set(items)];
}

/** An RFC 3339 instant (the validator checked the format; a date the calendar lacks still fails here). */
function instant(field: string, value: string | undefined): Date | null {
  if (value === undefined) return null;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw refused(field, 'must be an RFC 3339 date-time');
  return d;
}

/** The filters as checked values; every malformed one is 400 `invalid_query` naming its parameter. */
export function auditFilters(query: AuditQuery) {
  const from = instant('from', query.from);
  const to = instant('to', query.to);
  if (from && to && from.getTime() >= to.getTime()) throw refused('from', 'must be before to');
  const resourceId = query.resourceId === undefined || query.resourceId === '' ? null : query.resourceId;
  if (resourceId !== null && resourceId.trim() !== resourceId) throw refused('resourceId', 'must not start or end with spaces');
  return {
    actor: list('actor', query.actor, ID, 'a user, API key or service id'),
    action: list('action', query.action, ACTION, 'an action name such as monitor.created'),
    resourceType: list('resourceType', query.resourceType, RESOURCE_TYPE, 'a resource type such as monitor'),
    resourceId,
    from,
    to,
  };
}

/**
 * Audit entries, newest first, `limit` (clamped to 1..200) at a time; pass the
 * previous page's `nextBefore` as `before`. The filters narrow the rows in the
 * query itself (indexes: migration 0035), so a page is full of matches however
 * old they are. Business plan and above.
 */
export async function listAudit(db: Db, caller: Caller, query: AuditQuery) {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 200);
  const f = auditFilters(query);
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
    // It is a position, not a match: the filters need not hold for the cursor's own entry.
    const cursor = await visible().select('seq').where('id', '=', query.before).executeTakeFirst();
    if (!cursor) throw new ApiError(400, 'invalid_cursor', 'The before cursor is not one this organisation was given.', { field: 'before' }, [{ field: 'before', reason: 'unknown cursor' }]);
    q = q.where('seq', '<', cursor.seq);
  }
  // A person's changes are those they made in a session and those of the keys they created.
  if (f.actor) { const ids = f.actor; q = q.where((eb) => eb.or([eb('actor_id', 'in', ids), eb('actor_user_id', 'in', ids)])); }
  if (f.action) q = q.where('action', 'in', f.action);
  if (f.resourceType) q = q.where('resource_type', 'in', f.resourceType);
  if (f.resourceId !== null) q = q.where('resource_id', '=', f.resourceId);
  if (f.from) q = q.where('at', '>=', f.from);
  if (f.to) q = q.where('at', '<', f.to);
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
