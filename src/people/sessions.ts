/**
 * Signing in and out, the caller's sessions, passwords (change, reset by
 * e-mail link), and self-service sign-up. Sign-in failures all say the same
 * thing; password attempts are limited per client address, per account and
 * address, and per account with a backoff (`admitAttempt`); a password change
 * or reset ends the person's other sessions. A reset request does the same
 * work whether or not the address is known: the link is made and mailed by
 * the `password_reset` job.
 */
import { randomBytes } from 'node:crypto';
import type { JobHelpers } from 'graphile-worker';
import type { Caller } from '../auth/caller';
import { ABSOLUTE_DAYS, SESSION_TOKEN_KIND, sessionEnd } from '../auth/sessions';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashPassword, passwordMatches } from '../crypto/passwords';
import { hashToken, newToken } from '../crypto/tokens';
import { parseEmailAddress, sendMail } from '../alerting/channels/email';
import { deliveryContext } from '../alerting/context';
import { audit } from '../domain/audit';
import { createOrganization } from '../domain/organizations';
import { iso } from '../domain/tenancy';
import { enqueue } from '../jobs/queue';
import type { TaskDeps } from '../jobs/tasks';
import type { Ctx } from '../pipeline/context';
import { ApiError, conflict, invalid, notFound } from '../pipeline/errors';
import type { Bucket, RateLimits } from '../pipeline/ratelimit';

const RESET_KIND = 'pr';
const RESET_MS = 3600_000;
/** Attempts at sending one reset mail (graphile-worker's backoff: about a minute and a half in all). */
const RESET_MAIL_ATTEMPTS = 5;
const DAY_MS = 86_400_000;
/** The longest delay between attempts once an account is past its ceiling (`signin_backoff`). */
const BACKOFF_MAX_SECONDS = 60;

/** A hash to compare against when the address is unknown, so a miss costs as long as a wrong password. */
let decoy: Promise<string> | null = null;

function signInFailed(): ApiError {
  return new ApiError(401, 'sign_in_failed', 'The e-mail address or the password is not right.');
}

type SessionRow = { id: string; created_at: Date; last_seen_at: Date; expires_at: Date; user_agent: string | null; ip_address: string | null };

function sessionOut(r: SessionRow, currentId: string | null) {
  const end = sessionEnd(r.created_at, r.last_seen_at);
  return {
    id: r.id, current: r.id === currentId, createdAt: iso(r.created_at)!, lastSeenAt: iso(r.last_seen_at)!,
    expiresAt: iso(end < r.expires_at ? end : r.expires_at)!, userAgent: r.user_agent, ipAddress: r.ip_address,
  };
}

/** Where a session is started from (shown in the sessions list). */
export type SessionClient = Pick<Ctx['client'], 'userAgent' | 'address'>;

/** A new session for `userId` acting in `organizationId` (the person's first organisation when not given). */
export async function startSession(db: Db, userId: string, client: SessionClient, organizationId?: string) {
  let mq = db.selectFrom('memberships').select(['id', 'organization_id']).where('user_id', '=', userId);
  if (organizationId) mq = mq.where('organization_id', '=', organizationId);
  const m = await mq.orderBy('created_at').orderBy('id').executeTakeFirst();
  if (!m) throw signInFailed();
  const { token } = newToken(SESSION_TOKEN_KIND);
  const now = new Date();
  const row = await db.insertInto('sessions').values({
    id: newId('ses'), token_hash: hashToken(token), user_id: userId, organization_id: m.organization_id,
    created_at: now, last_seen_at: now, expires_at: new Date(now.getTime() + ABSOLUTE_DAYS * DAY_MS),
    user_agent: client.userAgent, ip_address: client.address,
  }).returningAll().executeTakeFirstOrThrow();
  return { token, session: sessionOut(row, row.id), organizationId: m.organization_id, membershipId: m.id };
}

/** An admitted password attempt: say how it went. */
interface Attempt {
  /** The password was right: the points it spent are given back (only failures count). */
  succeeded(): Promise<void>;
  /** The password was wrong: its points stay spent, and past the account's ceiling the next attempt waits longer. */
  failed(): Promise<void>;
}

/**
 * Admits one password attempt on the account `email` from `address`, or
 * throws 429 `rate_limited` (naming only `signin`). Its points are spent
 * before the password is hashed, each in one store step, so however many
 * guesses arrive at once no more are hashed than the limits allow: per client
 * address across accounts (spraying), per account and address (one guesser,
 * who holds up nobody else), and per account from everywhere, a ceiling past
 * which attempts are spaced by a doubling delay (1 s to 60 s) instead of
 * refused for the rest of the window, so strangers cannot lock a person out.
 */
async function admitAttempt(limits: RateLimits, email: string, address: string | null): Promise<Attempt> {
  const account = `account:${email}`;
  const client = `address:${address ?? ''}`;
  const spent: [string, Bucket][] = [];
  const giveBack = async () => { await Promise.all(spent.map(([key, bucket]) => limits.refund(key, bucket))); };
  let past = 0;
  try {
    for (const [key, bucket] of [[client, 'signin_address'], [`${account}|${client}`, 'signin_pair']] as const) {
      // A refusal spends its point too: it is given back below with the others.
      spent.push([key, bucket]);
      await limits.consume(key, bucket);
    }
    past = await limits.spendPast(account, 'signin_account');
    spent.push([account, 'signin_account']);
    if (past > 0) await limits.consume(account, 'signin_backoff');
  } catch (e) {
    if (!(e instanceof ApiError)) spent.pop();
    await giveBack().catch(() => undefined);
    throw e;
  }
  return {
    succeeded: giveBack,
    async failed() {
      if (past === 0) return;
      // Counted apart from the ceiling, which also holds attempts still in flight: the delay doubles per failure only.
      const strikes = await limits.spendPast(account, 'signin_strikes');
      await limits.block(account, 'signin_backoff', Math.min(2 ** (strikes - 1), BACKOFF_MAX_SECONDS));
    },
  };
}

/** POST /sessions. */
export async function signIn(ctx: Ctx, body: { email: string; password: string }) {
  const { db } = ctx;
  const email = body.email.trim().toLowerCase();
  const attempt = await admitAttempt(ctx.limits, email, ctx.client.address);
  const user = await db.selectFrom('users').select(['id', 'password_hash']).where((eb) => eb(eb.fn('lower', ['email']), '=', email)).executeTakeFirst();
  decoy ??= hashPassword('decoy password, never matches');
  // An unknown address costs one hash too, so timing does not tell which part was wrong.
  const right = await passwordMatches(body.password, user?.password_hash ?? await decoy) && !!user?.password_hash;
  if (!right || !user) {
    await attempt.failed();
    throw signInFailed();
  }
  // Signed in only once there is a session: a person without an organisation fails as a wrong password does.
  const started = await startSession(db, user.id, ctx.client).catch(async (e: unknown) => { await attempt.failed(); throw e; });
  await attempt.succeeded();
  return started;
}

/** GET /sessions: the caller's own. */
export async function listSessions(db: Db, caller: Caller) {
  const rows = await db.selectFrom('sessions').selectAll().where('user_id', '=', caller.userId).where('expires_at', '>', new Date())
    .orderBy('created_at', 'desc').orderBy('id').execute();
  const now = new Date();
  return rows.filter((r) => sessionEnd(r.created_at, r.last_seen_at) > now).map((r) => sessionOut(r, caller.session?.id ?? null));
}

/** DELETE /sessions/{id} (`current`: this one — signing out). */
export async function revokeSession(db: Db, caller: Caller, id: string) {
  const target = id === 'current' ? caller.session?.id ?? '' : id;
  const gone = await db.deleteFrom('sessions').where('id', '=', target).where('user_id', '=', caller.userId).returning('id').executeTakeFirst();
  if (!gone) throw notFound('session', 'id');
  return { id: gone.id, deleted: true as const, current: gone.id === caller.session?.id };
}

/** PUT /me/password: ends the caller's other sessions. */
export async function changePassword(ctx: Ctx, body: { currentPassword: string; newPassword: string }) {
  const { db, caller } = ctx;
  const user = await db.selectFrom('users').select(['email', 'password_hash']).where('id', '=', caller.userId).executeTakeFirstOrThrow();
  // A wrong current password is a guess like a wrong sign-in (a stolen session must not try passwords freely).
  const attempt = await admitAttempt(ctx.limits, user.email.toLowerCase(), ctx.client.address);
  if (!user.password_hash || !(await passwordMatches(body.currentPassword, user.password_hash))) {
    await attempt.failed();
    throw new ApiError(400, 'password_incorrect', 'The current password is not right.', {}, [{ field: 'currentPassword', reason: 'is not right' }]);
  }
  await attempt.succeeded();
  const hash = await hashPassword(body.newPassword, 'newPassword');
  return db.transaction().execute(async (tx) => {
    await tx.updateTable('users').set({ password_hash: hash, password_changed_at: new Date() }).where('id', '=', caller.userId).execute();
    const ended = await tx.deleteFrom('sessions').where('user_id', '=', caller.userId).where('id', '<>', caller.session?.id ?? '').returning('id').execute();
    await audit(tx, caller, { action: 'user.password_changed', resourceType: 'user', resourceId: caller.userId, changes: { password: { changed: true }, otherSessionsEnded: { from: null, to: ended.length } } });
    return { ok: true as const, otherSessionsEnded: ended.length };
  });
}

/**
 * POST /password-reset: the same answer, in the same time, whether or not the
 * address is known. The handler only spends the limits and queues a job (the
 * same statements for any address; no lookup, no mail): the job finds the
 * person, makes the one-hour, one-use link and mails it.
 */
export async function requestPasswordReset(ctx: Ctx, body: { email: string }) {
  const { db, services } = ctx;
  const email = parseEmailAddress(body.email, 'email').toLowerCase();
  await ctx.limits.consume(`address:${ctx.client.address ?? ''}`, 'reset_address');
  await ctx.limits.consume(`account:${email}`, 'reset_account');
  if (services.config.providers.smtpUrl) {
    // One job per address at a time: a request while one waits replaces it (the newest link is the one that works).
    await enqueue(db, 'password_reset', { email, requestId: randomBytes(16).toString('base64url'), requestedAt: new Date().toISOString() },
      { jobKey: `password_reset:${email}`, maxAttempts: RESET_MAIL_ATTEMPTS });
  }
  return { accepted: true as const };
}

/**
 * The `password_reset` task: mails the link of one request to a known
 * address (an unknown one gets nothing). The token is derived from the
 * request (a MAC under the master key), so a retry after a mail server
 * took the message but failed to say so sends the same link, never a second
 * one; a request overtaken by a newer one, or by a password set since, sends
 * nothing.
 */
export function passwordResetTask(deps: Pick<TaskDeps, 'db' | 'secrets' | 'services'>) {
  const { db, secrets, services } = deps;
  return async (payload: unknown, helpers: JobHelpers): Promise<void> => {
    const { email, requestId, requestedAt } = payload as { email: string; requestId: string; requestedAt: string };
    const at = new Date(requestedAt);
    const user = await db.selectFrom('users').select(['id', 'email', 'password_changed_at']).where((eb) => eb(eb.fn('lower', ['email']), '=', email)).executeTakeFirst();
    if (!user || (user.password_changed_at && user.password_changed_at > at)) return;
    const token = `${RESET_KIND}_${secrets.sign('password-reset', requestId)}`;
    const values = { token_hash: hashToken(token), expires_at: new Date(Date.now() + RESET_MS), created_at: at };
    const kept = await db.insertInto('password_resets').values({ id: newId('prs'), user_id: user.id, ...values })
      .onConflict((oc) => oc.column('user_id').doUpdateSet(values).where('password_resets.created_at', '<=', at))
      .returning('id').executeTakeFirst();
    if (!kept) return;
    const sent = await sendMail(user.email, deliveryContext(services), {
      subject: 'Reset your Vigil password',
      text: [
        'Someone (hopefully you) asked to reset the password of your Vigil account.', '',
        `Set a new password: ${services.baseUrl()}/password-reset/${token}`, '',
        'The link works once, for one hour. If you did not ask, ignore this message: your password stays as it is.',
      ].join('\n'),
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
    if (sent.delivered || sent.permanent || helpers.job.attempts >= helpers.job.max_attempts) return;
    throw new Error(sent.error ?? 'the reset mail was not sent');
  };
}

/** Whether a reset token is (still) good: for the page, before it shows a form. */
export async function resetTokenValid(db: Db, token: string): Promise<boolean> {
  if (!token.startsWith(`${RESET_KIND}_`) || token.length > 100) return false;
  return !!(await db.selectFrom('password_resets').select('id').where('token_hash', '=', hashToken(token)).where('expires_at', '>', new Date()).executeTakeFirst());
}

/**
 * POST /password-reset/confirm (and the reset page): the new password; every
 * session of the person ends. With `signIn`, a new one starts (the link
 * proved the person, as a password would): `signedIn` is its grant.
 */
export async function resetPassword(db: Db, body: { token: string; password: string; signIn?: boolean }, client: SessionClient) {
  const invalidLink = () => new ApiError(400, 'reset_link_invalid', 'This reset link does not work: it was used, replaced or has expired. Ask for a new one.', {}, [{ field: 'token', reason: 'is not a valid reset link' }]);
  if (!(await resetTokenValid(db, body.token))) throw invalidLink();
  const hash = await hashPassword(body.password, 'password');
  const userId = await db.transaction().execute(async (tx) => {
    const used = await tx.deleteFrom('password_resets').where('token_hash', '=', hashToken(body.token)).where('expires_at', '>', new Date())
      .returning('user_id').executeTakeFirst();
    if (!used) throw invalidLink();
    await tx.updateTable('users').set({ password_hash: hash, password_changed_at: new Date() }).where('id', '=', used.user_id).execute();
    const ended = await tx.deleteFrom('sessions').where('user_id', '=', used.user_id).returning('id').execute();
    // Recorded in each of the person's organisations: who reset, never the password.
    const person = await tx.selectFrom('users').select('email').where('id', '=', used.user_id).executeTakeFirstOrThrow();
    const orgs = await tx.selectFrom('memberships').select('organization_id').where('user_id', '=', used.user_id).execute();
    for (const o of orgs) {
      await audit(tx, { organizationId: o.organization_id, actor: { type: 'user', id: used.user_id, name: person.email } }, {
        action: 'user.password_reset', resourceType: 'user', resourceId: used.user_id, changes: { password: { changed: true }, sessionsEnded: { from: null, to: ended.length } },
      });
    }
    return used.user_id;
  });
  return { ok: true as const, signedIn: body.signIn ? await startSession(db, userId, client) : null };
}

/** How long the first owner's link works. */
const OWNER_LINK_MS = 24 * 3600_000;

/**
 * The first owner's one-time link (printed on the first start of an empty
 * database): a password-reset token for that person, valid 24 hours, used
 * once, stored as its hash like every reset token. Whoever holds the printed
 * line sets the password and is signed in; nobody else can, and no "first
 * visitor becomes admin" page exists.
 */
export async function ownerSetupToken(db: Db, userId: string): Promise<string> {
  const { token } = newToken(RESET_KIND);
  const values = { token_hash: hashToken(token), expires_at: new Date(Date.now() + OWNER_LINK_MS), created_at: new Date() };
  await db.insertInto('password_resets').values({ id: newId('prs'), user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values)).execute();
  return token;
}

/** POST /signup (SIGNUP=open): the person, their organisation on the free plan, and a session. */
export async function signUp(ctx: Ctx, body: { email: string; password: string; name: string; organizationName: string }) {
  const { db, services } = ctx;
  if (services.config.signup !== 'open') throw new ApiError(403, 'signup_closed', 'Sign-up is closed on this server: ask an administrator for an invitation.');
  await ctx.limits.consume(`address:${ctx.client.address ?? ''}`, 'signup_address');
  const email = parseEmailAddress(body.email, 'email');
  const name = body.name.trim();
  const orgName = body.organizationName.trim();
  if (!name) throw invalid('name', 'must not be blank');
  if (!orgName) throw invalid('organizationName', 'must not be blank');
  const hash = await hashPassword(body.password, 'password');
  const taken = await db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase())).executeTakeFirst();
  if (taken) throw conflict('email_taken', 'This address already has an account: sign in instead.', {}, 'email');
  const org = await createOrganization(db, { name: orgName, ownerEmail: email, plan: 'free', withKey: false });
  await db.updateTable('users').set({ name, password_hash: hash, password_changed_at: new Date() }).where('id', '=', org.userId).execute();
  return startSession(db, org.userId, ctx.client);
}
