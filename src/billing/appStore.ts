/**
 * In-app purchases from the App Store (POST /billing/store/verify). The
 * client sends a transaction id only; everything else is read back from
 * Apple's App Store Server API (`@apple/app-store-server-library`) and its
 * signed transaction verified against the configured root certificates —
 * never believed from the client. The purchase becomes the organisation's
 * `app_store` subscription (changed only in the store from then on);
 * verifying the same transaction again answers the same result.
 */
import {
  APIException, AppStoreServerAPIClient, Environment, SignedDataVerifier, type JWSTransactionDecodedPayload,
} from '@apple/app-store-server-library';
import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Config } from '../config';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { audit } from '../domain/audit';
import { iso } from '../domain/tenancy';
import { ApiError } from '../pipeline/errors';
import { applySubscription } from './state';

type StoreConfig = NonNullable<Config['appStore']>;

/** The API client, aimed at APP_STORE_API_URL when one is configured (a proxy, or a local fake in tests). */
class StoreClient extends AppStoreServerAPIClient {
  constructor(c: StoreConfig) {
    super(c.privateKey, c.keyId, c.issuerId, c.bundleId, c.environment === 'Production' ? Environment.PRODUCTION : Environment.SANDBOX);
    if (c.apiUrl) Object.assign(this, { urlBase: c.apiUrl.replace(/\/+$/, '') });
  }
}

const clients = new WeakMap<StoreConfig, { api: StoreClient; verifier: SignedDataVerifier }>();
function store(c: StoreConfig) {
  let s = clients.get(c);
  if (!s) {
    const env = c.environment === 'Production' ? Environment.PRODUCTION : Environment.SANDBOX;
    s = { api: new StoreClient(c), verifier: new SignedDataVerifier(c.rootCertificates, c.onlineChecks, env, c.bundleId, c.appAppleId ?? undefined) };
    clients.set(c, s);
  }
  return s;
}

const invalidTransaction = (why: string) => new ApiError(400, 'store_transaction_invalid', 'The App Store does not know this transaction for this app.', {},
  [{ field: 'transactionId', reason: why }]);

/** Reads the transaction back from Apple and verifies its signature; throws the contract's refusals. */
async function readTransaction(c: StoreConfig, transactionId: string): Promise<JWSTransactionDecodedPayload> {
  const s = store(c);
  let signed: string | undefined;
  try {
    signed = (await s.api.getTransactionInfo(transactionId)).signedTransactionInfo;
  } catch (e) {
    if (e instanceof APIException && e.httpStatusCode >= 400 && e.httpStatusCode < 500) throw invalidTransaction('unknown to the App Store');
    throw new ApiError(502, 'store_unavailable', "The App Store's server API did not answer; try again later.");
  }
  if (!signed) throw invalidTransaction('no signed transaction');
  try {
    return await s.verifier.verifyAndDecodeTransaction(signed);
  } catch {
    throw invalidTransaction('its signature, app or environment does not verify');
  }
}

/** POST /billing/store/verify. */
export async function verifyStorePurchase(db: Db, config: Pick<Config, 'appStore'>, caller: Caller, body: { transactionId: string }) {
  requireWholeOrganisation(caller, 'billing:manage', "change the organisation's plan");
  const c = config.appStore;
  if (!c) throw new ApiError(409, 'store_unavailable_here', 'In-app purchases are not set up on this server.');
  const t = await readTransaction(c, body.transactionId.trim());
  const product = t.productId ? c.products[t.productId] : undefined;
  if (!product || !t.originalTransactionId) throw invalidTransaction('not a subscription this server sells');
  const [plan, cadence] = product.split(':') as [string, 'monthly' | 'yearly'];
  const external = `appstore:${t.originalTransactionId}`;
  const owner = await db.selectFrom('subscriptions').select('organization_id').where('external_subscription_id', '=', external).executeTakeFirst();
  if (owner && owner.organization_id !== caller.organizationId) {
    throw new ApiError(409, 'store_transaction_in_use', 'This purchase belongs to another organisation.', {}, [{ field: 'transactionId', reason: 'attached to another organisation' }]);
  }
  const expires = t.expiresDate ? new Date(t.expiresDate) : null;
  const revoked = t.revocationDate !== undefined && t.revocationDate !== null;
  const status = !revoked && expires && expires > new Date() ? 'active' : 'canceled';
  await applySubscription(db, {
    organizationId: caller.organizationId, source: 'app_store', plan, status, cadence, currentPeriodEnd: expires, cancelAt: null, addOnPacks: 0,
    externalCustomerId: null, externalSubscriptionId: external, eventAt: new Date(t.signedDate ?? Date.now()),
  });
  if (t.transactionId && t.price !== undefined && t.currency) {
    // The App Store gives prices in milli-units.
    await db.insertInto('receipts').values({
      id: newId('rcp'), organization_id: caller.organizationId, source: 'app_store', external_id: `appstore:${t.transactionId}`,
      amount_cents: Math.round(t.price / 10), currency: t.currency, issued_at: new Date(t.purchaseDate ?? Date.now()), url: null,
    }).onConflict((oc) => oc.column('external_id').doNothing()).execute();
  }
  await audit(db, caller, { action: 'billing.store_verified', resourceType: 'billing', resourceId: external, changes: { plan: { from: null, to: plan }, status: { from: null, to: status } } });
  const sub = await db.selectFrom('subscriptions').select(['plan', 'status', 'current_period_end', 'source']).where('organization_id', '=', caller.organizationId).executeTakeFirstOrThrow();
  return { plan: sub.plan, status: sub.status as 'active' | 'canceled', expiresAt: iso(sub.current_period_end), source: sub.source as 'app_store' };
}
