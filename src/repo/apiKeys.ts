import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashToken, newToken } from '../crypto/tokens';

export interface NewKey {
  organizationId: string;
  membershipId: string;
  name: string;
  scopes: string[];
  workspaceIds: string[] | null;
  expiresAt: Date | null;
}

/** Stores a new key (its SHA-256 only) and returns the row and the token, which is never stored. */
export async function insertApiKey(db: Db, k: NewKey) {
  const { token, prefix } = newToken('vk');
  const row = await db.insertInto('api_keys').values({
    id: newId('key'),
    organization_id: k.organizationId,
    membership_id: k.membershipId,
    name: k.name,
    prefix,
    token_hash: hashToken(token),
    scopes: k.scopes,
    workspace_ids: k.workspaceIds,
    expires_at: k.expiresAt,
  }).returningAll().executeTakeFirstOrThrow();
  return { row, token };
}

/** Keys of an organisation with their owners, newest first. */
export function listApiKeys(db: Db, organizationId: string) {
  return db.selectFrom('api_keys as k')
    .innerJoin('memberships as ms', 'ms.id', 'k.membership_id')
    .innerJoin('users as u', 'u.id', 'ms.user_id')
    .select(['k.id', 'k.name', 'k.prefix', 'k.scopes', 'k.workspace_ids', 'k.created_at', 'k.last_used_at', 'k.expires_at',
      'k.revoked_at', 'k.membership_id', 'ms.workspace_ids as membership_workspace_ids', 'u.id as user_id', 'u.email', 'u.name as user_name'])
    .where('k.organization_id', '=', organizationId)
    .orderBy('k.created_at', 'desc').orderBy('k.id')
    .execute();
}

export type ApiKeyRow = Awaited<ReturnType<typeof listApiKeys>>[number];
