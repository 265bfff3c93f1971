import type { Db } from '../db/connect';
import { hashToken, sameHash, tokenPrefix } from '../crypto/tokens';
import { unauthorized } from '../pipeline/errors';
import { isPermission, isRole, permissionsOf, type Permission } from './roles';
import type { Caller } from './caller';
import { authenticateSession, SESSION_TOKEN_KIND } from './sessions';
import { PLAN_COLUMNS, planOf } from './plan';

/** Intersects two confinements (null = unconfined). */
export function intersectWorkspaces(a: readonly string[] | null, b: readonly string[] | null): string[] | null {
  if (a === null) return b === null ? null : [...b];
  if (b === null) return [...a];
  return a.filter((w) => b.includes(w));
}

// last_used_at is written at most once a minute per key: a read should not
// become a write on every request.
const lastUsedWrites = new Map<string, number>();

/**
 * Resolved callers by token hash, for CALLER_TTL_MS. A revocation made in this
 * process applies at once (forgetCallers); one made by another process applies
 * within the TTL. Expiry is checked on every request.
 */
const CALLER_TTL_MS = 2000;
const MAX_CACHED = 10_000;
const callers = new Map<string, { caller: Caller; until: number; expiresAt: number | null }>();

/** Drops every cached caller (after a revocation or a change of role or plan). */
export function forgetCallers(): void {
  callers.clear();
}

async function touch(db: Db, keyId: string, lastUsed: Date | null, now: Date): Promise<void> {
  const last = lastUsedWrites.get(keyId) ?? lastUsed?.getTime() ?? 0;
  if (now.getTime() - last <= 60_000) return;
  lastUsedWrites.set(keyId, now.getTime());
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', keyId).execute();
}

/**
 * Resolves `Authorization: Bearer <token>` to a caller. Every failure (missing,
 * malformed, unknown, revoked, expired) is the same 401.
 */
export async function authenticate(db: Db, authorization: string | undefined, now = new Date()): Promise<Caller> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const token = m?.[1];
  if (token?.startsWith(`${SESSION_TOKEN_KIND}_`)) return authenticateSession(db, token, now);
  const prefix = token ? tokenPrefix(token) : null;
  if (!token || !prefix) throw unauthorized();
  const hash = hashToken(token);
  const cacheKey = hash.toString('base64');
  const cached = callers.get(cacheKey);
  if (cached && cached.until > now.getTime()) {
    if (cached.expiresAt !== null && cached.expiresAt <= now.getTime()) throw unauthorized();
    await touch(db, cached.caller.key!.id, null, now);
    return cached.caller;
  }
  const rows = await db
    .selectFrom('api_keys as k')
    .innerJoin('memberships as ms', 'ms.id', 'k.membership_id')
    .innerJoin('users as u', 'u.id', 'ms.user_id')
    .innerJoin('organizations as o', 'o.id', 'k.organization_id')
    .innerJoin('plans as p', 'p.code', 'o.plan')
    .select([
      'k.id', 'k.name', 'k.prefix', 'k.token_hash', 'k.scopes', 'k.workspace_ids as key_ws', 'k.expires_at', 'k.revoked_at',
      'k.last_used_at', 'k.organization_id', 'ms.id as membership_id', 'ms.role', 'ms.workspace_ids as member_ws', 'u.id as user_id',
      ...PLAN_COLUMNS,
    ])
    .where('k.prefix', '=', prefix)
    .execute();
  const row = rows.find((r) => sameHash(r.token_hash, hash));
  if (!row || row.revoked_at || (row.expires_at && row.expires_at <= now) || !isRole(row.role)) throw unauthorized();

  const rolePerms = permissionsOf(row.role);
  const scopes = row.scopes.filter(isPermission);
  const permissions = new Set<Permission>(scopes.length ? rolePerms.filter((p) => scopes.includes(p)) : rolePerms);
  await touch(db, row.id, row.last_used_at, now);
  const caller: Caller = {
    kind: 'key',
    organizationId: row.organization_id,
    userId: row.user_id,
    membershipId: row.membership_id,
    role: row.role,
    permissions,
    workspaceIds: intersectWorkspaces(row.member_ws, row.key_ws),
    key: { id: row.id, name: row.name, prefix: row.prefix, scopes: row.scopes, workspaceIds: row.key_ws },
    session: null,
    plan: planOf(row),
    actor: { type: 'api_key', id: row.id, name: `${row.name} (${row.prefix}…)` },
  };
  if (callers.size >= MAX_CACHED) callers.clear();
  callers.set(cacheKey, { caller, until: now.getTime() + CALLER_TTL_MS, expiresAt: row.expires_at?.getTime() ?? null });
  return caller;
}
