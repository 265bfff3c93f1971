import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startFakeAppStore, type FakeAppStore } from './support/appstore';

// In-app purchases: POST /billing/store/verify reads the transaction back
// from a local fake of Apple's App Store Server API (signed with a test PKI
// configured as the trusted root, through @apple/app-store-server-library),
// never believing the client; idempotent; one organisation per purchase;
// the store's subscription is then changed only in the store.

const BUNDLE = 'com.example.vigil';
let store: FakeAppStore;
let server: TestServer;
let org: { organizationId: string; apiKey: string };
let api: ApiClient;

beforeAll(async () => {
  store = await startFakeAppStore(BUNDLE, 'com.example.vigil.pro.monthly=pro:monthly,com.example.vigil.business.yearly=business:yearly');
  server = await startTestServer({
    ...store.env, STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x', STRIPE_PRICES: 'pro:monthly=price_p', STRIPE_API_URL: store.url,
    RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
  });
  org = await server.org({ plan: 'free' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await store.close();
});

test('a verified purchase becomes the app_store subscription; verifying again answers the same', async () => {
  expect(ok('getBilling', await api.get('/billing'))).toMatchObject({ canPurchaseInApp: true, source: 'none' });
  store.put('2000000123', { productId: 'com.example.vigil.pro.monthly' });
  const first = ok('verifyStorePurchase', await api.post('/billing/store/verify', { transactionId: '2000000123' }));
  expect(first).toMatchObject({ plan: 'pro', status: 'active', source: 'app_store', expiresAt: expect.any(String) });
  expect(store.requests.at(-1)).toEqual({ path: expect.stringMatching(/^\/inApps\/v1\/transactions\/2000000123\??$/), bearer: true });
  expect(ok('verifyStorePurchase', await api.post('/billing/store/verify', { transactionId: '2000000123' }))).toEqual(first);
  const billing = ok('getBilling', await api.get('/billing'));
  expect(billing).toMatchObject({ plan: 'pro', status: 'active', cadence: 'monthly', source: 'app_store', canCheckoutOnWeb: false });
  expect(billing.receipts).toEqual([expect.objectContaining({ amountCents: 999, currency: 'EUR', url: null })]);
  expect(ok('getMe', await api.get('/me')).entitlements.plan).toBe('pro');
  // Changed only in the store: web checkout refuses.
  const web = await api.post('/billing/checkout', { plan: 'pro', cadence: 'monthly' });
  expect(web.status).toBe(409);
  expect(web.body.code).toBe('store_subscription');

  // The owner, alone in the organisation, cannot delete their account while the subscription runs.
  const email = ok('getMe', await api.get('/me')).user.email;
  await setPassword(server.db, email, 'owner password 1');
  const signIn = await fetch(`${server.url}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'owner password 1' }) });
  const session = server.api((await signIn.json()).data.token);
  const refused = await session.delete('/account');
  expect(refused.status).toBe(409);
  expect(refused.body).toMatchObject({ code: 'subscription_active', vars: { organizationId: org.organizationId, source: 'app_store' } });
});

test('refusals: unknown, another app\'s, an unsold product, another organisation\'s, the store down', async () => {
  const unknown = await api.post('/billing/store/verify', { transactionId: '999' });
  expect(unknown.status).toBe(400);
  expect(unknown.body).toMatchObject({ code: 'store_transaction_invalid', details: { field: 'transactionId' } });
  store.put('2000000200', { productId: 'com.example.vigil.pro.monthly', bundleId: 'com.other.app' });
  expect((await api.post('/billing/store/verify', { transactionId: '2000000200' })).body.code).toBe('store_transaction_invalid');
  store.put('2000000201', { productId: 'com.example.vigil.stickers' });
  expect((await api.post('/billing/store/verify', { transactionId: '2000000201' })).body.code).toBe('store_transaction_invalid');
  const other = await server.org({ plan: 'free' });
  const taken = await server.api(other.apiKey).post('/billing/store/verify', { transactionId: '2000000123' });
  expect(taken.status).toBe(409);
  expect(taken.body.code).toBe('store_transaction_in_use');
  // Signed by a PKI this server does not trust (a forged transaction): refused.
  const rogue = await startFakeAppStore(BUNDLE, 'x=pro:monthly');
  rogue.put('2000000400', { productId: 'com.example.vigil.pro.monthly' });
  store.putSigned('2000000400', rogue.signed('2000000400')!);
  expect((await api.post('/billing/store/verify', { transactionId: '2000000400' })).body.code).toBe('store_transaction_invalid');
  await rogue.close();
  store.failWith = 503;
  const down = await server.api(other.apiKey).post('/billing/store/verify', { transactionId: '2000000123' });
  expect(down.status).toBe(502);
  expect(down.body.code).toBe('store_unavailable');
  store.failWith = null;
  const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
  expect((await viewer.post('/billing/store/verify', { transactionId: '2000000123' })).status).toBe(403);
});

test('an expired purchase is canceled and leaves the free plan', async () => {
  const o = await server.org({ plan: 'free' });
  store.put('2000000300', { productId: 'com.example.vigil.business.yearly', expiresDate: Date.now() - 86_400_000 });
  const res = ok('verifyStorePurchase', await server.api(o.apiKey).post('/billing/store/verify', { transactionId: '2000000300' }));
  expect(res).toMatchObject({ plan: 'business', status: 'canceled', source: 'app_store' });
  expect(ok('getBilling', await server.api(o.apiKey).get('/billing')).plan).toBe('free');
});
