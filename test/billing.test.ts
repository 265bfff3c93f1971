import Stripe from 'stripe';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';

// Billing through the API and Stripe's webhook: GET /billing, a Checkout
// Session created against a local fake of Stripe's API, and subscription and
// invoice events signed with the stripe package's own test-header helper —
// plan, status, period, cancellation, add-on packs (summed into the caps),
// receipts; each event applied once, a late older event ignored. No network.

const SECRET = 'whsec_test_0123456789';
const stripe = new Stripe('sk_test_fake');
let server: TestServer;
let fake: HttpReceiver;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;
let clock = Math.floor(Date.now() / 1000);
let n = 0;

function event(type: string, object: Record<string, unknown>, created = ++clock) {
  return { id: `evt_${++n}_${type}`, object: 'event', type, created, api_version: '2025-01-01', data: { object } };
}

async function deliver(e: unknown, signature?: string) {
  const payload = JSON.stringify(e);
  const header = signature ?? stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  const res = await fetch(`${server.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': header }, body: payload });
  return { status: res.status, body: await res.json() as any };
}

function subscription(over: Record<string, unknown> = {}, items: [string, number][] = [['price_pro_m', 1], ['price_addon_m', 2]]) {
  return {
    id: 'sub_1', object: 'subscription', customer: 'cus_1', status: 'active', cancel_at: null,
    current_period_end: clock + 30 * 86_400, metadata: { organizationId: org.organizationId },
    items: { object: 'list', data: items.map(([price, quantity], i) => ({ id: `si_${i}`, object: 'subscription_item', quantity, price: { id: price, object: 'price' } })) },
    ...over,
  };
}

beforeAll(async () => {
  fake = await startHttpReceiver();
  server = await startTestServer({
    STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_API_URL: fake.url,
    STRIPE_PRICES: 'pro:monthly=price_pro_m,business:yearly=price_biz_y,addon:monthly=price_addon_m',
    RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
  });
  org = await server.org({ plan: 'free' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

test('before any purchase: the free plan, nothing bought, web checkout offered; viewers cannot read billing', async () => {
  expect(ok('getBilling', await api.get('/billing'))).toEqual({
    plan: 'free', status: 'none', cadence: null, currentPeriodEnd: null, cancelAt: null, addOnPacks: 0, receipts: [],
    source: 'none', canCheckoutOnWeb: true, canPurchaseInApp: false,
  });
  const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
  expect((await viewer.get('/billing')).status).toBe(403);
});

test('checkout: a Stripe Checkout Session for the plan and packs; unpriced plans 409; Stripe refusing 502', async () => {
  fake.respondWith(200, { id: 'cs_test_123', object: 'checkout.session', url: 'https://checkout.stripe.test/c/pay/cs_test_123' });
  const made = ok('createCheckoutSession', await api.post('/billing/checkout', { plan: 'pro', cadence: 'monthly', addOnPacks: 2 }), 201);
  expect(made).toEqual({ id: 'cs_test_123', url: 'https://checkout.stripe.test/c/pay/cs_test_123' });
  const [req] = await fake.waitFor(1);
  expect(req.path).toBe('/v1/checkout/sessions');
  expect(req.headers.authorization).toBe('Bearer sk_test_fake');
  const form = new URLSearchParams(req.body);
  expect(form.get('mode')).toBe('subscription');
  expect(form.get('client_reference_id')).toBe(org.organizationId);
  expect(form.get('line_items[0][price]')).toBe('price_pro_m');
  expect(form.get('line_items[1][price]')).toBe('price_addon_m');
  expect(form.get('line_items[1][quantity]')).toBe('2');
  expect(form.get('subscription_data[metadata][organizationId]')).toBe(org.organizationId);

  const unpriced = await api.post('/billing/checkout', { plan: 'business', cadence: 'monthly' });
  expect(unpriced.status).toBe(409);
  expect(unpriced.body.code).toBe('checkout_unavailable');
  expect((await api.post('/billing/checkout', { plan: 'enterprise', cadence: 'monthly' })).status).toBe(400);
  fake.respondWith(400, { error: { type: 'invalid_request_error', message: 'No such price' } });
  const refused = await api.post('/billing/checkout', { plan: 'pro', cadence: 'monthly' });
  expect(refused.status).toBe(502);
  expect(refused.body.code).toBe('checkout_not_created');
});

test('webhook: a subscription sets plan, status, period and packs (summed into the caps); receipts once; late events ignored; deletion returns to free', async () => {
  const created = await deliver(event('customer.subscription.created', subscription()));
  expect(created).toEqual({ status: 200, body: { received: true, outcome: 'applied' } });
  const billing = ok('getBilling', await api.get('/billing'));
  expect(billing).toMatchObject({ plan: 'pro', status: 'active', cadence: 'monthly', addOnPacks: 2, source: 'web_processor', cancelAt: null });
  expect(new Date(billing.currentPeriodEnd).getTime() / 1000).toBeCloseTo(clock + 30 * 86_400 - 1, -1);
  // Entitlements: the pro plan's caps plus two packs (50 monitors, 5 members, 2 status pages each).
  const me = ok('getMe', await api.get('/me'));
  expect(me.entitlements).toMatchObject({ plan: 'pro', monitorCap: 300, memberCap: 30, statusPageCap: 14 });

  const invoice = event('invoice.paid', { id: 'in_1', object: 'invoice', customer: 'cus_1', subscription: 'sub_1', amount_paid: 4900, currency: 'eur', created: clock, hosted_invoice_url: 'https://invoice.stripe.test/i/in_1' });
  expect((await deliver(invoice)).body.outcome).toBe('applied');
  expect((await deliver(invoice)).body.outcome).toBe('duplicate');
  expect(ok('getBilling', await api.get('/billing')).receipts).toEqual([
    { id: expect.stringMatching(/^rcp_/), amountCents: 4900, currency: 'EUR', issuedAt: expect.any(String), url: 'https://invoice.stripe.test/i/in_1' },
  ]);

  // A payment fails: past due, still entitled. Then an older event arrives late: nothing changes.
  await deliver(event('invoice.payment_failed', { id: 'in_2', object: 'invoice', customer: 'cus_1', subscription: 'sub_1', amount_paid: 0, currency: 'eur', created: clock }));
  expect(ok('getBilling', await api.get('/billing')).status).toBe('past_due');
  const late = await deliver(event('customer.subscription.updated', subscription({ status: 'active' }, [['price_pro_m', 1]]), clock - 1000));
  expect(late.status).toBe(200);
  expect(ok('getBilling', await api.get('/billing'))).toMatchObject({ status: 'past_due', addOnPacks: 2 });

  // Cancelled at period end, then deleted: back to the free plan.
  const cancelAt = clock + 10 * 86_400;
  await deliver(event('customer.subscription.updated', subscription({ cancel_at: cancelAt })));
  expect(ok('getBilling', await api.get('/billing'))).toMatchObject({ status: 'active', cancelAt: new Date(cancelAt * 1000).toISOString() });
  await deliver(event('customer.subscription.deleted', subscription({ status: 'canceled' })));
  expect(ok('getBilling', await api.get('/billing'))).toMatchObject({ plan: 'free', status: 'canceled', addOnPacks: 0, source: 'web_processor' });
  expect(ok('getMe', await api.get('/me')).entitlements).toMatchObject({ plan: 'free', monitorCap: 20 });
  expect(JSON.stringify((await api.get('/audit?limit=5')).body)).not.toContain('sk_test_fake');
});

test('a delivery whose signature does not verify is 400 and changes nothing', async () => {
  const e = event('customer.subscription.created', subscription({ id: 'sub_forged' }));
  const forged = await deliver(e, `t=${clock},v1=${'0'.repeat(64)}`);
  expect(forged.status).toBe(400);
  expect(forged.body.code).toBe('signature_invalid');
  const otherSecret = stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(e), secret: 'whsec_wrong' });
  expect((await deliver(e, otherSecret)).status).toBe(400);
  expect(ok('getBilling', await api.get('/billing')).plan).toBe('free');
});
