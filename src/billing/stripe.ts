/**
 * Stripe, the web processor: a Checkout Session for a plan (and add-on
 * packs), and the webhook that applies what Stripe reports — subscriptions
 * created, updated, deleted; invoices paid (receipts) or failed — verified
 * by `Stripe-Signature`, each event applied once, an event older than the
 * last applied one ignored (Stripe does not promise order).
 */
import Stripe from 'stripe';
import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Config } from '../config';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { audit } from '../domain/audit';
import type { Services } from '../pipeline/context';
import { ApiError } from '../pipeline/errors';
import { applySubscription, type SubscriptionStatus } from './state';

type StripeConfig = NonNullable<Config['stripe']>;

let clients = new WeakMap<StripeConfig, Stripe>();

function client(c: StripeConfig): Stripe {
  let s = clients.get(c);
  if (!s) {
    const u = new URL(c.apiUrl);
    s = new Stripe(c.secretKey, { host: u.hostname, port: Number(u.port || (u.protocol === 'http:' ? 80 : 443)), protocol: u.protocol.replace(':', '') as 'http' | 'https', maxNetworkRetries: 1, timeout: 15_000 });
    clients.set(c, s);
  }
  return s;
}

/** For tests that swap configurations. */
export function forgetStripeClients(): void { clients = new WeakMap(); }

/** POST /billing/checkout: a Stripe Checkout Session for `plan` at `cadence` (and add-on packs); answers its URL. */
export async function createCheckout(db: Db, services: Services, caller: Caller, body: { plan: string; cadence: string; addOnPacks?: number }) {
  requireWholeOrganisation(caller, 'billing:manage', "change the organisation's plan");
  const c = services.config.stripe;
  const price = c?.prices[`${body.plan}:${body.cadence}`];
  if (!c || !price) {
    throw new ApiError(409, 'checkout_unavailable', `Web checkout of ${body.plan} (${body.cadence}) is not offered on this server.`, {}, [{ field: 'plan', reason: 'no price configured' }]);
  }
  const packs = body.addOnPacks ?? 0;
  const addon = c.prices[`addon:${body.cadence}`];
  if (packs > 0 && !addon) throw new ApiError(409, 'checkout_unavailable', 'Add-on packs are not offered on this server.', {}, [{ field: 'addOnPacks', reason: 'no price configured' }]);
  const sub = await db.selectFrom('subscriptions').select(['source', 'status', 'external_customer_id']).where('organization_id', '=', caller.organizationId).executeTakeFirst();
  if (sub?.source === 'app_store' && sub.status !== 'canceled') {
    throw new ApiError(409, 'store_subscription', 'This subscription was bought in the App Store: change it in the store\'s own settings.');
  }
  const base = services.baseUrl();
  let session: Stripe.Checkout.Session;
  try {
    session = await client(c).checkout.sessions.create({
      mode: 'subscription',
      client_reference_id: caller.organizationId,
      ...(sub?.external_customer_id ? { customer: sub.external_customer_id } : {}),
      line_items: [{ price, quantity: 1 }, ...(packs > 0 ? [{ price: addon!, quantity: packs }] : [])],
      subscription_data: { metadata: { organizationId: caller.organizationId } },
      metadata: { organizationId: caller.organizationId },
      success_url: `${base}/billing/done?session={CHECKOUT_SESSION_ID}`,
      cancel_url: `${base}/billing/cancelled`,
    });
  } catch (e) {
    throw new ApiError(502, 'checkout_not_created', 'Stripe did not create the checkout; try again later.', {}, [{ field: 'plan', reason: e instanceof Error ? e.message.slice(0, 200) : 'refused' }]);
  }
  await audit(db, caller, { action: 'billing.checkout_started', resourceType: 'billing', resourceId: session.id, changes: { plan: { from: null, to: body.plan }, cadence: { from: null, to: body.cadence }, addOnPacks: { from: null, to: packs } } });
  return { id: session.id, url: session.url ?? '' };
}

const STATUS: Record<string, SubscriptionStatus> = {
  active: 'active', trialing: 'trialing', past_due: 'past_due', unpaid: 'past_due', incomplete: 'past_due', paused: 'past_due',
  canceled: 'canceled', incomplete_expired: 'canceled',
};

const at = (unix: number | null | undefined) => (unix ? new Date(unix * 1000) : null);

/** The plan, cadence and packs of a subscription's items, by the configured prices. */
function itemsOf(c: StripeConfig, sub: Stripe.Subscription) {
  const byPrice = new Map(Object.entries(c.prices).map(([k, v]) => [v, k]));
  let plan: string | null = null;
  let cadence: 'monthly' | 'yearly' | null = null;
  let packs = 0;
  let periodEnd: number | null = (sub as unknown as { current_period_end?: number }).current_period_end ?? null;
  for (const item of sub.items.data) {
    const key = byPrice.get(item.price.id);
    periodEnd ??= (item as unknown as { current_period_end?: number }).current_period_end ?? null;
    if (!key) continue;
    const [p, cad] = key.split(':');
    if (p === 'addon') packs += item.quantity ?? 1;
    else { plan = p; cadence = cad as 'monthly' | 'yearly'; }
  }
  return { plan, cadence, packs, periodEnd };
}

async function organizationOf(db: Db, sub: Stripe.Subscription): Promise<string | null> {
  const byId = await db.selectFrom('subscriptions').select('organization_id').where('external_subscription_id', '=', sub.id).executeTakeFirst();
  if (byId) return byId.organization_id;
  const meta = sub.metadata?.organizationId;
  if (!meta) return null;
  return (await db.selectFrom('organizations').select('id').where('id', '=', meta).executeTakeFirst())?.id ?? null;
}

async function applyStripeSubscription(db: Db, c: StripeConfig, sub: Stripe.Subscription, eventAt: Date, deleted: boolean) {
  const organizationId = await organizationOf(db, sub);
  if (!organizationId) return 'unknown organisation';
  const { plan, cadence, packs, periodEnd } = itemsOf(c, sub);
  if (!plan) return 'no known plan price';
  const status = deleted ? 'canceled' : STATUS[sub.status] ?? 'past_due';
  await applySubscription(db, {
    organizationId, source: 'web_processor', plan, status, cadence, currentPeriodEnd: at(periodEnd), cancelAt: at(sub.cancel_at),
    addOnPacks: packs, externalCustomerId: typeof sub.customer === 'string' ? sub.customer : sub.customer?.id ?? null, externalSubscriptionId: sub.id, eventAt,
  });
  return 'applied';
}

async function recordInvoice(db: Db, invoice: Stripe.Invoice, paid: boolean, eventAt: Date) {
  const subId = (invoice as unknown as { subscription?: string | { id: string } | null }).subscription
    ?? (invoice as unknown as { parent?: { subscription_details?: { subscription?: string } } }).parent?.subscription_details?.subscription;
  const subscriptionId = typeof subId === 'string' ? subId : subId?.id ?? null;
  const customerId = typeof invoice.customer === 'string' ? invoice.customer : invoice.customer?.id ?? null;
  let sub = await db.selectFrom('subscriptions').select(['organization_id', 'status', 'event_at'])
    .where((eb) => eb.or([eb('external_subscription_id', '=', subscriptionId ?? ''), eb('external_customer_id', '=', customerId ?? '')])).executeTakeFirst();
  // An invoice may arrive before its subscription's event: the metadata copied from the subscription names the organisation.
  const meta = (invoice as unknown as { subscription_details?: { metadata?: Record<string, string> }; parent?: { subscription_details?: { metadata?: Record<string, string> } } });
  const orgId = meta.parent?.subscription_details?.metadata?.organizationId ?? meta.subscription_details?.metadata?.organizationId;
  if (!sub && orgId && paid) {
    const org = await db.selectFrom('organizations').select('id').where('id', '=', orgId).executeTakeFirst();
    if (org) sub = { organization_id: org.id, status: 'active', event_at: null };
  }
  if (!sub) return 'unknown subscription';
  if (!paid) {
    // A failed payment: past due, unless a later change (a recovery, a cancellation) was applied already.
    await db.updateTable('subscriptions').set({ status: 'past_due', event_at: eventAt })
      .where('organization_id', '=', sub.organization_id).where('status', '=', 'active')
      .where((eb) => eb.or([eb('event_at', 'is', null), eb('event_at', '<=', eventAt)])).execute();
    return 'applied';
  }
  await db.insertInto('receipts').values({
    id: newId('rcp'), organization_id: sub.organization_id, source: 'web_processor', external_id: invoice.id ?? '',
    amount_cents: invoice.amount_paid, currency: invoice.currency, issued_at: at(invoice.created) ?? new Date(), url: invoice.hosted_invoice_url ?? invoice.invoice_pdf ?? null,
  }).onConflict((oc) => oc.column('external_id').doNothing()).execute();
  return 'applied';
}

/**
 * Handles one webhook delivery (`POST {base_url}/webhooks/stripe`): 400 for
 * a signature that does not verify; each event id applied once.
 */
export async function handleStripeWebhook(db: Db, config: Pick<Config, 'stripe'>, raw: Buffer, signature: string | undefined) {
  const c = config.stripe;
  if (!c) throw new ApiError(404, 'not_found', 'Stripe is not configured on this server.');
  let event: Stripe.Event;
  try {
    event = client(c).webhooks.constructEvent(raw, signature ?? '', c.webhookSecret);
  } catch (e) {
    throw new ApiError(400, 'signature_invalid', 'The Stripe-Signature header does not verify.', {}, [{ field: 'Stripe-Signature', reason: e instanceof Error ? e.message.slice(0, 200) : 'invalid' }]);
  }
  const first = await db.insertInto('billing_events').values({ id: event.id, source: 'stripe' }).onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst();
  if (!first) return { received: true, outcome: 'duplicate' };
  const eventAt = new Date(event.created * 1000);
  let outcome = 'ignored';
  try {
    switch (event.type) {
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
        outcome = await applyStripeSubscription(db, c, event.data.object, eventAt, false);
        break;
      case 'customer.subscription.deleted':
        outcome = await applyStripeSubscription(db, c, event.data.object, eventAt, true);
        break;
      case 'invoice.paid':
      case 'invoice.payment_succeeded':
        outcome = await recordInvoice(db, event.data.object, true, eventAt);
        break;
      case 'invoice.payment_failed':
        outcome = await recordInvoice(db, event.data.object, false, eventAt);
        break;
      default:
        break;
    }
  } catch (e) {
    // Not applied: Stripe retries the event, which must then be processed again.
    await db.deleteFrom('billing_events').where('id', '=', event.id).execute();
    throw e;
  }
  return { received: true, outcome };
}
