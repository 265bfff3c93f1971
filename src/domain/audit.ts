import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';

/** Fields whose values are never written into the audit log, only the fact that they changed. */
const SEALED = new Set(['config', 'token', 'secret', 'password', 'tokenHash', 'token_hash', 'community', 'headers', 'body']);

/** A field's change as the audit log keeps it. */
export type Change = { from: unknown; to: unknown } | { changed: true };

/**
 * The changes between `before` and `after` for `fields`; sealed fields are
 * recorded as `{changed: true}` without values.
 */
export function diff(before: Record<string, unknown> | null, after: Record<string, unknown> | null, fields: string[]): Record<string, Change> {
  const out: Record<string, Change> = {};
  for (const f of fields) {
    const a = before?.[f] ?? null;
    const b = after?.[f] ?? null;
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    out[f] = SEALED.has(f) ? { changed: true } : { from: a, to: b };
  }
  return out;
}

export interface AuditInput {
  action: string;
  resourceType: string;
  resourceId: string | null;
  workspaceId?: string | null;
  changes: Record<string, Change>;
}

/** Who made a change: a caller, or a person acting outside the API (accepting an invitation). */
export type AuditActor = Pick<Caller, 'organizationId' | 'actor'>;

/** Records a configuration change made by `caller` (in the caller's transaction when `db` is one). */
export async function audit(db: Db, caller: AuditActor, e: AuditInput): Promise<void> {
  for (const k of Object.keys(e.changes)) {
    if (SEALED.has(k) && !('changed' in e.changes[k])) e.changes[k] = { changed: true };
  }
  await db.insertInto('audit_log').values({
    id: newId('aud'),
    organization_id: caller.organizationId,
    actor_type: caller.actor.type,
    actor_id: caller.actor.id,
    actor_name: caller.actor.name,
    action: e.action,
    resource_type: e.resourceType,
    resource_id: e.resourceId,
    workspace_id: e.workspaceId ?? null,
    changes: JSON.stringify(e.changes),
  }).execute();
}
