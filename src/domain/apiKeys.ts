import type { Caller } from '../auth/caller';
import { isPermission } from '../auth/roles';
import type { Db } from '../db/connect';
import { ApiError, forbidden, invalid, notFound } from '../pipeline/errors';
import { insertApiKey, listApiKeys, type ApiKeyRow } from '../repo/apiKeys';
import { audit } from './audit';
import { forgetCallers } from '../auth/authenticate';
import { keyReach, missingRecord, reachShown, reachVisible, requireChangeable, type View } from '../auth/confinement';
import { iso, visibleWorkspace } from './tenancy';

/**
 * Owners and admins see and revoke every key of the organisation within
 * their view (a confined one: keys reaching its workspaces, changing only
 * those wholly within them; src/auth/confinement.ts); others their own.
 */
const seesAllKeys = (c: Caller) => c.role === 'owner' || c.role === 'admin';

/** Whether `caller` sees the key `k` at all. */
function seesKey(caller: Caller, k: Pick<ApiKeyRow, 'membership_id' | 'workspace_ids' | 'membership_workspace_ids'>): boolean {
  if (k.membership_id !== caller.membershipId && !seesAllKeys(caller)) return false;
  return reachVisible(caller, keyReach(k.workspace_ids, k.membership_workspace_ids));
}

/** The API shape of a key (never its token or hash); `workspaceIds` is its reach as `view` may see it. */
export function apiKeyOut(k: ApiKeyRow, view: View) {
  return {
    id: k.id, name: k.name, prefix: k.prefix, scopes: k.scopes, workspaceIds: reachShown(view, keyReach(k.workspace_ids, k.membership_workspace_ids)),
    owner: { userId: k.user_id, email: k.email, name: k.user_name },
    createdAt: iso(k.created_at)!, lastUsedAt: iso(k.last_used_at), expiresAt: iso(k.expires_at), revokedAt: iso(k.revoked_at),
  };
}

/** Keys the caller may see, by prefix, newest first. */
export async function listKeys(db: Db, caller: Caller) {
  const rows = await listApiKeys(db, caller.organizationId);
  return rows.filter((k) => seesKey(caller, k)).map((k) => apiKeyOut(k, caller));
}

export interface CreateKeyInput { name: string; scopes?: string[]; workspaceIds?: string[]; expiresInDays?: number | null }

/**
 * Mints a key bound to the caller's membership. Its scopes may narrow, never
 * widen, what the caller holds; its workspaces must be visible to the caller and
 * default to the caller's own confinement. The token is returned only here.
 */
export async function createKey(db: Db, caller: Caller, input: CreateKeyInput) {
  const name = input.name.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1 to 100 characters');
  const requested = [...new Set(input.scopes ?? [])];
  requested.forEach((s, i) => { if (!isPermission(s)) throw invalid(`scopes.${i}`, `"${s}" is not a permission`); });
  for (const s of requested) if (!caller.permissions.has(s as never)) throw forbidden(s);
  // A scoped key minting a key passes its own narrowing on.
  const scopes = requested.length ? requested : caller.key?.scopes.length ? [...caller.permissions] : [];
  let workspaceIds: string[] | null = caller.workspaceIds ? [...caller.workspaceIds] : null;
  if (input.workspaceIds?.length) {
    const ids = [...new Set(input.workspaceIds)];
    for (const [i, id] of ids.entries()) await visibleWorkspace(db, caller, id, `workspaceIds.${i}`);
    workspaceIds = ids;
  }
  const days = input.expiresInDays ?? null;
  if (days !== null && (!Number.isInteger(days) || days < 1 || days > 3650)) throw invalid('expiresInDays', 'must be a whole number of days from 1 to 3650');
  const expiresAt = days === null ? null : new Date(Date.now() + days * 86_400_000);
  return db.transaction().execute(async (tx) => {
    const { row, token } = await insertApiKey(tx, { organizationId: caller.organizationId, membershipId: caller.membershipId, name, scopes, workspaceIds, expiresAt });
    await audit(tx, caller, {
      action: 'api_key.created', resourceType: 'api_key', resourceId: row.id,
      changes: { name: { from: null, to: name }, prefix: { from: null, to: row.prefix }, scopes: { from: null, to: scopes }, workspaceIds: { from: null, to: workspaceIds }, expiresAt: { from: null, to: iso(expiresAt) } },
    });
    const listed = (await listApiKeys(tx, caller.organizationId)).find((k) => k.id === row.id)!;
    return { ...apiKeyOut(listed, caller), token };
  });
}

/** Revokes a key (by id); a key of another person is refused unless the caller sees all keys. */
export async function revokeKey(db: Db, caller: Caller, id: string | undefined) {
  if (!id) throw new ApiError(400, 'missing_field', 'Name the key to revoke with the query parameter id (or body id).', { field: 'id' }, [{ field: 'id', reason: 'is required' }]);
  const key = await db.selectFrom('api_keys as k').innerJoin('memberships as ms', 'ms.id', 'k.membership_id')
    .select(['k.id', 'k.membership_id', 'k.revoked_at', 'k.workspace_ids', 'ms.workspace_ids as membership_workspace_ids'])
    .where('k.organization_id', '=', caller.organizationId).where('k.id', '=', id).executeTakeFirst();
  if (!key || !seesKey(caller, key)) throw notFound('API key', 'id');
  // Even one's own: a confined key of the owner must not revoke the owner's unconfined key.
  requireChangeable(caller, { reach: keyReach(key.workspace_ids, key.membership_workspace_ids) }, 'api_key:manage', 'revoke a key', missingRecord('API key'));
  if (!key.revoked_at) {
    await db.transaction().execute(async (tx) => {
      await tx.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).execute();
      await audit(tx, caller, { action: 'api_key.revoked', resourceType: 'api_key', resourceId: id, changes: { revoked: { from: false, to: true } } });
    });
    forgetCallers();
  }
  return { id, deleted: true as const };
}
