/**
 * The organisation's billing as GET /billing shows it, and the one way a
 * subscription change reaches entitlements: `applySubscription` writes the
 * subscription and keeps the organisation's `plan` and `add_on_packs` (what
 * every cap reads) in step — the paid plan while active, trialing or past
 * due; free once canceled.
 */
import type { Caller } from '../auth/caller';
import { forgetCallers } from '../auth/authenticate';
import type { Db } from '../db/connect';
import { iso } from '../domain/tenancy';
import { audit } from '../domain/audit';
import type { Config } from '../config';

export type SubscriptionStatus = 'active' | 'trialing' | 'past_due' | 'canceled';
export type Source = 'web_processor' | 'app_store' | 'manual';

export interface SubscriptionState {
  organizationId: string;
  source: Source;
  plan: string;
  status: SubscriptionStatus;
  cadence: 'monthly' | 'yearly' | null;
  currentPeriodEnd: Date | null;
  cancelAt: Date | null;
  addOnPacks: number;
  externalCustomerId: string | null;
  externalSubscriptionId: string | null;
  /** The processor's time of the change: an older one than the last applied changes nothing. */
  eventAt: Date;
}

const ENTITLED: SubscriptionStatus[] = ['active', 'trialing', 'past_due'];

/** Records `s` unless a later change was applied already; returns whether it was applied. */
export async function applySubscription(db: Db, s: SubscriptionState): Promise<boolean> {
  const applied = await db.transaction().execute(async (tx) => {
    const row = await tx.insertInto('subscriptions').values({
      organization_id: s.organizationId, source: s.source, plan: s.plan, status: s.status, cadence: s.cadence,
      current_period_end: s.currentPeriodEnd, cancel_at: s.cancelAt, add_on_packs: s.addOnPacks,
      external_customer_id: s.externalCustomerId, external_subscription_id: s.externalSubscriptionId, event_at: s.eventAt, updated_at: new Date(),
    }).onConflict((oc) => oc.column('organization_id').doUpdateSet((eb) => ({
      source: eb.ref('excluded.source'), plan: eb.ref('excluded.plan'), status: eb.ref('excluded.status'), cadence: eb.ref('excluded.cadence'),
      current_period_end: eb.ref('excluded.current_period_end'), cancel_at: eb.ref('excluded.cancel_at'), add_on_packs: eb.ref('excluded.add_on_packs'),
      external_customer_id: eb.fn.coalesce('excluded.external_customer_id', 'subscriptions.external_customer_id'),
      external_subscription_id: eb.fn.coalesce('excluded.external_subscription_id', 'subscriptions.external_subscription_id'),
      event_at: eb.ref('excluded.event_at'), updated_at: eb.ref('excluded.updated_at'),
    })).where((eb) => eb.or([eb('subscriptions.event_at', 'is', null), eb('subscriptions.event_at', '<=', eb.ref('excluded.event_at'))])))
      .returning('organization_id').executeTakeFirst();
    if (!row) return false;
    const entitled = ENTITLED.includes(s.status);
    const before = await tx.selectFrom('organizations').select(['plan', 'add_on_packs']).where('id', '=', s.organizationId).executeTakeFirst();
    const after = { plan: entitled ? s.plan : 'free', add_on_packs: entitled ? s.addOnPacks : 0 };
    if (before && (before.plan !== after.plan || before.add_on_packs !== after.add_on_packs)) {
      const by = s.source === 'web_processor' ? 'Stripe' : s.source === 'app_store' ? 'App Store' : 'manual';
      await audit(tx, { organizationId: s.organizationId, actor: { type: 'system', id: s.source, name: by } }, {
        action: 'billing.plan_changed', resourceType: 'billing', resourceId: s.externalSubscriptionId,
        changes: { plan: { from: before.plan, to: after.plan }, addOnPacks: { from: before.add_on_packs, to: after.add_on_packs }, status: { from: null, to: s.status } },
      });
    }
    await tx.updateTable('organizations').set({ plan: entitled ? s.plan : 'free', add_on_packs: entitled ? s.addOnPacks : 0 })
      .where('id', '=', s.organizationId).execute();
    return true;
  });
  // Cached keys carry the plan: the new one applies from the next request.
  if (applied) forgetCallers();
  return applied;
}

/** GET /billing. */
export async function getBilling(db: Db, caller: Caller, config: Pick<Config, 'stripe' | 'appStore'>) {
  const [sub, org, receipts] = await Promise.all([
    db.selectFrom('subscriptions').selectAll().where('organization_id', '=', caller.organizationId).executeTakeFirst(),
    db.selectFrom('organizations').select(['plan', 'add_on_packs']).where('id', '=', caller.organizationId).executeTakeFirstOrThrow(),
    db.selectFrom('receipts').selectAll().where('organization_id', '=', caller.organizationId).orderBy('issued_at', 'desc').orderBy('id').limit(12).execute(),
  ]);
  // No subscription: a paid plan was set by the operator (manual), else nothing is bought.
  const source = sub?.source ?? (org.plan === 'free' ? 'none' : 'manual');
  const live = sub && ENTITLED.includes(sub.status as SubscriptionStatus);
  return {
    plan: org.plan,
    status: (sub?.status ?? (source === 'manual' ? 'active' : 'none')) as SubscriptionStatus | 'none',
    cadence: (sub?.cadence ?? null) as 'monthly' | 'yearly' | null,
    currentPeriodEnd: iso(sub?.current_period_end ?? null),
    cancelAt: iso(sub?.cancel_at ?? null),
    addOnPacks: org.add_on_packs,
    receipts: receipts.map((r) => ({ id: r.id, amountCents: Number(r.amount_cents), currency: r.currency.toUpperCase(), issuedAt: iso(r.issued_at)!, url: r.url })),
    source: source as Source | 'none',
    // A store subscription is changed only in the store; a live web one is changed by a new checkout or the portal.
    canCheckoutOnWeb: config.stripe !== null && !(live && sub!.source === 'app_store'),
    canPurchaseInApp: config.appStore !== null && !(live && sub!.source === 'web_processor'),
  };
}
