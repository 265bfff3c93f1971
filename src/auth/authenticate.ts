import type { Db } from '../db/connect';
import { hashToken, sameHash, tokenPrefix } from '../crypto/tokens';
import { unauthorized } from '../pipeline/errors';
import { isPermission, isRole, permissionsOf, type Permission } from './roles';
import type { Caller } from './caller';
import { authenticateSession, SESSION_TOKEN_KIND } from './sessions';
import { planOf } from './plan';
import { keyById, keysByPrefix } from './keyReads';

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
 * Callers are resolved from PostgreSQL on every request: one indexed read of
 * the key with its membership, person, organisation and plan. No caller is
 * cached between requests, because no cache can know, without asking
 * PostgreSQL, that another process has just removed the member, revoked the
 * key or demoted the role — and a request that starts after such a change
 * committed must see it (spec, Authentication rules 4 and 6; docs/roles.md:
 * "the role is evaluated on every request"). What is cached is what costs CPU
 * and never changes: which key a token is, the statements' SQL, the
 * permission set of each role and scope list.
 *
 * Kept for the writers that change keys, roles or plans (they call it after
 * their change): there is nothing of theirs to forget any more.
 */
export function forgetCallers(): void {
  /* nothing cached that a change could make stale */
}

/**
 * Which key a token is, by the token's hash: that never changes (a key is
 * never re-keyed), so once known the key is read by its id (src/auth/keyReads.ts),
 * which gathers concurrent requests into one read.
 */
const keyIds = new Map<string, string>();
const MAX_KEY_IDS = 10_000;

/** Permission sets by role and scopes (read-only, shared by every caller with the same pair). */
const permissionSets = new Map<string, ReadonlySet<Permission>>();

function permissionsFor(role: string, scopes: readonly string[]): ReadonlySet<Permission> {
  const id = `${role}\0${scopes.join(',')}`;
  let set = permissionSets.get(id);
  if (!set) {
    const rolePerms = permissionsOf(role);
    const granted = scopes.filter(isPermission);
    set = new Set<Permission>(granted.length ? rolePerms.filter((p) => granted.includes(p)) : rolePerms);
    if (permissionSets.size < 1000) permissionSets.set(id, set);
  }
  return set;
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
  const known = keyIds.get(hash.toString('base64'));
  const row = known ? await keyById(db, known) : (await keysByPrefix(db, prefix)).find((r) => sameHash(r.token_hash, hash));
  if (!row || (known && !sameHash(row.token_hash, hash)) || row.revoked_at || (row.expires_at && row.expires_at <= now) || !isRole(row.role)) throw unauthorized();
  if (!known) {
    if (keyIds.size >= MAX_KEY_IDS) keyIds.clear();
    keyIds.set(hash.toString('base64'), row.id);
  }

  const permissions = permissionsFor(row.role, row.scopes);
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
  return caller;
}
