/**
 * Sign-in sessions as credentials: `vs_…` tokens (as a bearer token or the
 * `vigil_session` cookie) resolved to a caller acting with the role of the
 * person's membership in the session's active organisation. A session ends
 * after IDLE_DAYS without use or ABSOLUTE_DAYS after sign-in; only a SHA-256
 * of its token is stored.
 */
import type { Db } from '../db/connect';
import { hashToken } from '../crypto/tokens';
import { unauthorized } from '../pipeline/errors';
import { isRole, permissionsOf, type Permission } from './roles';
import type { Caller } from './caller';
import { PLAN_COLUMNS, planOf } from './plan';

export const SESSION_TOKEN_KIND = 'vs';
export const SESSION_COOKIE = 'vigil_session';
export const IDLE_DAYS = 14;
export const ABSOLUTE_DAYS = 30;
const DAY_MS = 86_400_000;
/** last_seen_at is written at most this often per session: a read should not become a write every time. */
const TOUCH_MS = 60_000;

/** When a session seen at `lastSeen`, created at `created`, ends. */
export function sessionEnd(created: Date, lastSeen: Date): Date {
  return new Date(Math.min(lastSeen.getTime() + IDLE_DAYS * DAY_MS, created.getTime() + ABSOLUTE_DAYS * DAY_MS));
}

/** The membership a session acts with: its organisation's, else the person's oldest (the organisation went). */
async function membershipFor(db: Db, userId: string, organizationId: string | null) {
  const base = db.selectFrom('memberships as ms')
    .innerJoin('organizations as o', 'o.id', 'ms.organization_id')
    .innerJoin('plans as p', 'p.code', 'o.plan')
    .select(['ms.id as membership_id', 'ms.organization_id', 'ms.role', 'ms.workspace_ids', ...PLAN_COLUMNS])
    .where('ms.user_id', '=', userId);
  const active = organizationId ? await base.where('ms.organization_id', '=', organizationId).executeTakeFirst() : undefined;
  return active ?? base.orderBy('ms.created_at').orderBy('ms.id').executeTakeFirst();
}

/** Resolves a session token to its caller; every failure is the same 401. */
export async function authenticateSession(db: Db, token: string, now = new Date()): Promise<Caller> {
  const s = await db.selectFrom('sessions as s').innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.id', 's.user_id', 's.organization_id', 's.created_at', 's.last_seen_at', 's.expires_at', 'u.email', 'u.name'])
    .where('s.token_hash', '=', hashToken(token)).executeTakeFirst();
  if (!s || sessionEnd(s.created_at, s.last_seen_at) <= now || s.expires_at <= now) throw unauthorized();
  const m = await membershipFor(db, s.user_id, s.organization_id);
  if (!m || !isRole(m.role)) throw unauthorized();
  if (m.organization_id !== s.organization_id || now.getTime() - s.last_seen_at.getTime() > TOUCH_MS) {
    await db.updateTable('sessions').set({ last_seen_at: now, organization_id: m.organization_id }).where('id', '=', s.id).execute();
  }
  return {
    kind: 'session',
    organizationId: m.organization_id,
    userId: s.user_id,
    membershipId: m.membership_id,
    role: m.role,
    permissions: new Set<Permission>(permissionsOf(m.role)),
    workspaceIds: m.workspace_ids,
    key: null,
    session: { id: s.id },
    plan: planOf(m),
    actor: { type: 'user', id: s.user_id, name: s.name ? `${s.name} <${s.email}>` : s.email },
  };
}

/** The session token carried by a `Cookie` header, if any. */
export function sessionFromCookie(cookie: string | undefined): string | null {
  if (!cookie) return null;
  for (const part of cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) {
      const value = rest.join('=');
      return value.startsWith(`${SESSION_TOKEN_KIND}_`) ? value : null;
    }
  }
  return null;
}
