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

/**
 * Who made a change: a caller, or a person acting outside the API (accepting
 * an invitation). `userId` is the person behind the actor (a key's creator,
 * a session's person; every `Caller` has it); an actor of type `user` is that
 * person itself.
 */
export type AuditActor = Pick<Caller, 'organizationId' | 'actor'> & { userId?: string };

/** The person behind `caller`'s actor, or null for the service itself. */
function personOf(caller: AuditActor): string | null {
  if (caller.actor.type === 'system') return null;
  return caller.userId || (caller.actor.type === 'user' ? caller.actor.id : null);
}

/**
 * Records a configuration change made by `caller` (in the caller's
 * transaction when `db` is one), naming the actor (a key, a session) and the
 * person behind it as they were at that moment.
 */
export async function audit(db: Db, caller: AuditActor, e: AuditInput): Promise<void> {
  for (const k of Object.keys(e.changes)) {
    if (SEALED.has(k) && !('changed' in e.changes[k])) e.changes[k] = { changed: true };
  }
  const personId = personOf(caller);
  const person = personId ? await db.selectFrom('users').select(['id', 'email', 'name']).where('id', '=', personId).executeTakeFirst() : undefined;
  await db.insertInto('audit_log').values({
    id: newId('aud'),
    organization_id: caller.organizationId,
    actor_type: caller.actor.type,
    actor_id: caller.actor.id,
    actor_name: caller.actor.name,
    actor_user_id: person?.id ?? null,
    actor_user_email: person?.email ?? null,
    actor_user_name: person?.name ?? null,
    action: e.action,
    resource_type: e.resourceType,
    resource_id: e.resourceId,
    workspace_id: e.workspaceId ?? null,
    changes: JSON.stringify(e.changes),
  }).execute();
}
