/**
 * DELETE /account: the calling person deletes their own account (session
 * only). Of the spec's two descriptions, this one holds: the account and
 * every membership go — with each membership's API keys and personal
 * channels, shared channels staying with their team — and an organisation
 * whose only member is the caller goes with it, everything in it included.
 * Refused (409) while the caller is the only owner of an organisation that
 * has other members (`sole_owner`: hand ownership over first), and while an
 * organisation that would go with the account still has a paid subscription
 * running (`subscription_active`: cancel it first, in the store for an App
 * Store one).
 */
import type { Caller } from '../auth/caller';
import { forgetCallers } from '../auth/authenticate';
import type { Db } from '../db/connect';
import { audit } from '../domain/audit';
import { conflict } from '../pipeline/errors';
import { PERSONAL_CHANNEL_KINDS } from './members';

export async function deleteAccount(db: Db, caller: Caller) {
  await db.transaction().execute(async (tx) => {
    const memberships = await tx.selectFrom('memberships as ms').innerJoin('organizations as o', 'o.id', 'ms.organization_id')
      .select((eb) => ['ms.id', 'ms.organization_id', 'ms.role', 'o.name',
        eb.selectFrom('memberships as x').select((x) => x.fn.countAll<string>().as('n')).whereRef('x.organization_id', '=', 'ms.organization_id').as('members'),
        eb.selectFrom('memberships as x').select((x) => x.fn.countAll<string>().as('n')).whereRef('x.organization_id', '=', 'ms.organization_id').where('x.role', '=', 'owner').as('owners')])
      .where('ms.user_id', '=', caller.userId).forUpdate('ms').execute();
    for (const m of memberships) {
      if (m.role === 'owner' && Number(m.owners) === 1 && Number(m.members) > 1) {
        throw conflict('sole_owner', `You are the only owner of ${m.name}, which has other members: make one of them an owner first.`, { organizationId: m.organization_id });
      }
    }
    const leaving = memberships.filter((m) => Number(m.members) === 1).map((m) => m.organization_id);
    if (leaving.length > 0) {
      const paid = await tx.selectFrom('subscriptions').innerJoin('organizations as o', 'o.id', 'subscriptions.organization_id')
        .select(['o.id', 'o.name', 'subscriptions.source']).where('subscriptions.organization_id', 'in', leaving)
        .where('subscriptions.status', 'in', ['active', 'trialing', 'past_due']).where('subscriptions.cancel_at', 'is', null).executeTakeFirst();
      if (paid) {
        throw conflict('subscription_active', `${paid.name} would be deleted with your account but its subscription is still running: cancel it first${paid.source === 'app_store' ? ' in the App Store' : ''}.`,
          { organizationId: paid.id, source: paid.source });
      }
    }
    const user = await tx.selectFrom('users').select(['email']).where('id', '=', caller.userId).executeTakeFirstOrThrow();
    for (const m of memberships) {
      if (Number(m.members) === 1) {
        // Its only member is leaving: the organisation goes, with everything in it.
        await tx.deleteFrom('check_results').where('organization_id', '=', m.organization_id).execute();
        await tx.deleteFrom('organizations').where('id', '=', m.organization_id).execute();
        continue;
      }
      await tx.updateTable('notification_channels').set({ owner_membership_id: null })
        .where('owner_membership_id', '=', m.id).where('kind', 'not in', PERSONAL_CHANNEL_KINDS).execute();
      await tx.deleteFrom('notification_channels').where('owner_membership_id', '=', m.id).execute();
      await tx.deleteFrom('memberships').where('id', '=', m.id).execute();
      await audit(tx, { organizationId: m.organization_id, actor: { type: 'user', id: caller.userId, name: user.email } }, {
        action: 'member.account_deleted', resourceType: 'member', resourceId: m.id, changes: { member: { from: { email: user.email, role: m.role }, to: null } },
      });
    }
    // Sessions and reset links go with the person (foreign keys).
    await tx.deleteFrom('users').where('id', '=', caller.userId).execute();
  });
  forgetCallers();
  return { id: caller.userId, deleted: true as const };
}
