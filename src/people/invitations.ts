/**
 * Invitations: POST /members sends one (a one-time link by e-mail, creating
 * no account); the person follows `{base_url}/invitations/<token>` and
 * accepts — a newcomer sets a name and a password, someone who already has an
 * account just joins (the link, sent to the address, proves the address is
 * theirs). The link works once, for 7 days; inviting the address again
 * replaces it.
 */
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashPassword } from '../crypto/passwords';
import { hashToken, newToken } from '../crypto/tokens';
import { parseEmailAddress, sendMail } from '../alerting/channels/email';
import { deliveryContext } from '../alerting/context';
import { audit } from '../domain/audit';
import type { Ctx, Services } from '../pipeline/context';
import { startSession } from './sessions';
import { ApiError, conflict, invalid } from '../pipeline/errors';
import { mayChange, requireGrantable } from '../auth/confinement';
import { checkMemberCap, confinement, invitationOut, mayHandle } from './members';

const TOKEN_KIND = 'inv';
const VALID_DAYS = 7;
const NAME_MAX = 80;

/** The link an invitation is accepted at. */
export function invitationUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/invitations/${token}`;
}

/**
 * POST /members: a new (or replacing) invitation, sent by e-mail; 502 `invitation_not_sent` (the mail
 * server refused it) keeps nothing. Without a mail server configured it is kept unsent.
 */
export async function inviteMember(db: Db, services: Services, caller: Caller, body: { email: string; role: string; workspaceIds?: string[] }) {
  const email = parseEmailAddress(body.email, 'email');
  mayHandle(caller, body.role, 'invite to', 'member:invite');
  requireGrantable(caller, body.role, 'member:invite');
  const workspaceIds = await confinement(db, caller, body.workspaceIds);
  const { token } = newToken(TOKEN_KIND);
  return db.transaction().execute(async (tx) => {
    const member = await tx.selectFrom('memberships as ms').innerJoin('users as u', 'u.id', 'ms.user_id').select('ms.id')
      .where('ms.organization_id', '=', caller.organizationId).where((eb) => eb(eb.fn('lower', ['u.email']), '=', email.toLowerCase())).executeTakeFirst();
    if (member) throw conflict('already_member', `${email} is already a member.`, {}, 'email');
    const earlier = await tx.selectFrom('invitations').select(['id', 'role', 'workspace_ids']).where('organization_id', '=', caller.organizationId)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase())).forUpdate().execute();
    // Inviting again replaces the earlier invitation, so only someone who could withdraw it may.
    for (const e of earlier) {
      if (!mayChange(caller, { reach: e.workspace_ids, role: e.role })) {
        throw conflict('already_invited', `${email} already has an invitation that reaches beyond your workspaces; someone unconfined can replace it.`, {}, 'email');
      }
    }
    const replaced = await tx.deleteFrom('invitations').where('id', 'in', earlier.length ? earlier.map((e) => e.id) : ['']).returning('id').execute();
    await checkMemberCap(tx, caller);
    const row = await tx.insertInto('invitations').values({
      id: newId('inv'), organization_id: caller.organizationId, email, role: body.role, workspace_ids: workspaceIds,
      token_hash: hashToken(token), invited_by_membership_id: caller.membershipId, expires_at: new Date(Date.now() + VALID_DAYS * 86_400_000),
    }).returningAll().executeTakeFirstOrThrow();
    await audit(tx, caller, {
      action: 'member.invited', resourceType: 'invitation', resourceId: row.id,
      changes: { invitation: { from: replaced.length ? { replaced: replaced[0].id } : null, to: { email, role: body.role, workspaceIds } } },
    });
    const who = await tx.selectFrom('users').select(['name', 'email']).where('id', '=', caller.userId).executeTakeFirst();
    const out = invitationOut({ ...row, by_name: who?.name ?? null, by_email: who?.email ?? null });
    // A server without a mail server (SMTP_URL unset) has nobody to refuse the message: the invitation is
    // kept and listed, as an e-mail channel is created unconfirmed; inviting again once SMTP_URL is set
    // mails a fresh link (and replaces this one).
    if (!services.config.providers.smtpUrl) return out;
    const org = (await tx.selectFrom('organizations').select('name').where('id', '=', caller.organizationId).executeTakeFirst())?.name ?? 'an organisation';
    const inviter = who?.name || who?.email || 'Someone';
    // Sent inside the transaction: a refused message keeps no invitation behind.
    const sent = await sendMail(email, deliveryContext(services), {
      subject: `${inviter} invited you to ${org} on Vigil`,
      text: [
        `${inviter} invited you to join ${org} on Vigil as ${body.role}.`, '',
        `Accept the invitation: ${invitationUrl(services.baseUrl(), token)}`, '',
        `The link works once and expires in ${VALID_DAYS} days. If you did not expect it, ignore this message.`,
      ].join('\n'),
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
    if (!sent.delivered) {
      throw new ApiError(502, 'invitation_not_sent', 'The invitation could not be sent; nothing was kept. Check SMTP_URL and try again.', {},
        [{ field: 'email', reason: sent.error ?? 'the mail server refused it' }]);
    }
    return out;
  });
}

/** A pending invitation by its link, with what the page shows; null when unknown, used, withdrawn or expired. */
export async function invitationByToken(db: Db, token: string) {
  if (!token.startsWith(`${TOKEN_KIND}_`) || token.length > 100) return null;
  const row = await db.selectFrom('invitations as i').innerJoin('organizations as o', 'o.id', 'i.organization_id')
    .leftJoin('users as u', (j) => j.on((eb) => eb(eb.fn('lower', ['u.email']), '=', eb.fn('lower', ['i.email']))))
    .select(['i.id', 'i.email', 'i.role', 'i.organization_id', 'o.name as organization', 'u.id as user_id', 'u.password_hash'])
    .where('i.token_hash', '=', hashToken(token)).where('i.expires_at', '>', new Date()).executeTakeFirst();
  if (!row) return null;
  return { id: row.id, email: row.email, role: row.role, organization: row.organization, organizationId: row.organization_id, hasAccount: row.user_id !== null && row.password_hash !== null };
}

/** What accepting needs from a newcomer (ignored for someone who already has an account). */
export interface AcceptInput { name?: string; password?: string }

/**
 * Accepts the invitation of `token`: the person's account (made now for a
 * newcomer), a membership with the invited role and workspaces, and the
 * invitation gone. 404 `invitation_not_found` for a link that does not work
 * (unknown, used, withdrawn, expired alike).
 */
export async function acceptInvitation(db: Db, token: string, input: AcceptInput) {
  const invitation = await invitationByToken(db, token);
  if (!invitation) throw invitationNotFound();
  // Hash outside the transaction: it takes a while on purpose.
  let passwordHash: string | null = null;
  let name: string | null = null;
  if (!invitation.hasAccount) {
    name = (input.name ?? '').trim();
    if (!name || [...name].length > NAME_MAX) throw invalid('name', `must be 1 to ${NAME_MAX} characters`);
    passwordHash = await hashPassword(input.password ?? '', 'password');
  }
  return db.transaction().execute(async (tx) => {
    const inv = await tx.selectFrom('invitations').selectAll().where('id', '=', invitation.id).where('expires_at', '>', new Date()).forUpdate().executeTakeFirst();
    if (!inv) throw invitationNotFound();
    let user = await tx.selectFrom('users').select(['id', 'email', 'password_hash']).where((eb) => eb(eb.fn('lower', ['email']), '=', inv.email.toLowerCase())).executeTakeFirst();
    if (!user) {
      user = await tx.insertInto('users').values({ id: newId('usr'), email: inv.email, name, password_hash: passwordHash, password_changed_at: new Date() })
        .returning(['id', 'email', 'password_hash']).executeTakeFirstOrThrow();
    } else if (!user.password_hash && passwordHash) {
      await tx.updateTable('users').set({ name, password_hash: passwordHash, password_changed_at: new Date() }).where('id', '=', user.id).execute();
      user = { ...user, password_hash: passwordHash };
    }
    const existing = await tx.selectFrom('memberships').select('id').where('organization_id', '=', inv.organization_id).where('user_id', '=', user.id).executeTakeFirst();
    const membershipId = existing?.id ?? newId('mem');
    if (!existing) {
      await tx.insertInto('memberships').values({ id: membershipId, organization_id: inv.organization_id, user_id: user.id, role: inv.role, workspace_ids: inv.workspace_ids }).execute();
    }
    await tx.deleteFrom('invitations').where('id', '=', inv.id).execute();
    await audit(tx, { organizationId: inv.organization_id, actor: { type: 'user', id: user.id, name: user.email } }, {
      action: 'member.joined', resourceType: 'member', resourceId: membershipId,
      changes: { member: { from: null, to: { email: user.email, role: inv.role, workspaceIds: inv.workspace_ids } } },
    });
    // The person chose their password in this very request: only then does accepting prove them (sign-in may follow).
    const passwordSet = passwordHash !== null && user.password_hash === passwordHash;
    return { organizationId: inv.organization_id, organization: invitation.organization, membershipId, userId: user.id, role: inv.role, email: user.email, passwordSet };
  });
}

/**
 * POST /invitations/accept: the JSON twin of the invitation page's form. It
 * spends the same per-address point as the page (`link_address`), so the
 * two together are held to one limit, and answers the new membership.
 */
export async function acceptInvitationByToken(ctx: Pick<Ctx, 'db' | 'limits' | 'client'>, body: AcceptInput & { token: string; signIn?: boolean }) {
  await ctx.limits.consume(`address:${ctx.client.address ?? ''}`, 'link_address');
  const done = await acceptInvitation(ctx.db, body.token, { name: body.name, password: body.password });
  // A newcomer who just set a password is signed in, in the organisation they joined; an existing account signs in with its password.
  const signedIn = body.signIn && done.passwordSet ? await startSession(ctx.db, done.userId, ctx.client, done.organizationId) : null;
  return { organizationId: done.organizationId, membershipId: done.membershipId, userId: done.userId, role: done.role as 'owner' | 'admin' | 'member' | 'viewer', signedIn };
}

function invitationNotFound(): ApiError {
  return new ApiError(404, 'invitation_not_found', 'This invitation link does not work: it was used, withdrawn or has expired. Ask for a new one.');
}
