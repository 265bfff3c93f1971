import type { Browser, Page } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { until } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';
import { axe, closeWatched, ensureWebBuilt, launch, open, shot, signIn, type Watched } from './support/web';

// Settings › My account and Billing in the browser: the profile; a password
// changed (the wrong current one refused at its field) and the new one signs
// in; a second session ended from the first is signed out at its next read,
// and "sign out everywhere" ends them all; SMS enrolment with the code read
// from a local fake of the SMS provider, a wrong code refused in the
// server's words; the incident feed created, fetched, replaced and revoked;
// account deletion refused to the last owner (and while an App Store
// subscription runs) and done for a plain member; billing's plan, usage and
// a checkout that sends the browser to (a local fake of) Stripe; an App
// Store subscription explained; no Billing for a member.

const PASSWORD = 'account test password 1';
let server: TestServer;
let browser: Browser;
let sms: HttpReceiver;
let stripe: HttpReceiver;
let owner: string;
let member: string;
let storeOwner: string;
let memberId: string;
const pages: Watched[] = [];

const emailOf = async (userId: string) => (await server.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow()).email;

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  sms = await startHttpReceiver();
  sms.respondWith(201, { sid: 'SM1', status: 'queued' });
  stripe = await startHttpReceiver();
  server = await startTestServer({
    WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
    SMS_PROVIDER_URL: `${sms.url}/2010-04-01`, SMS_ACCOUNT_SID: 'AC1', SMS_AUTH_TOKEN: 'sms-token', SMS_FROM: '+15005550006',
    STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_WEBHOOK_SECRET: 'whsec_test', STRIPE_API_URL: stripe.url,
    STRIPE_PRICES: 'pro:monthly=price_pro_m,business:monthly=price_biz_m,addon:monthly=price_addon_m',
  });
  const org = await server.org({ plan: 'business', name: 'Acme Ops' });
  owner = await emailOf(org.userId);
  await setPassword(server.db, owner, PASSWORD);
  const m = await server.member(org.organizationId, 'member');
  memberId = m.userId;
  member = await emailOf(m.userId);
  await setPassword(server.db, member, PASSWORD);
  // An organisation whose plan was bought in the App Store (as POST /billing/store/verify leaves it).
  const store = await server.org({ plan: 'pro', name: 'Store Co' });
  storeOwner = await emailOf(store.userId);
  await setPassword(server.db, storeOwner, PASSWORD);
  const end = new Date(Date.now() + 20 * 86_400_000);
  await server.db.insertInto('subscriptions').values({
    organization_id: store.organizationId, source: 'app_store', plan: 'pro', status: 'active', cadence: 'monthly', current_period_end: end, add_on_packs: 0, external_subscription_id: '2000000777',
  } as any).execute();
  await server.db.insertInto('receipts').values({
    id: 'rcp_webtest1', organization_id: store.organizationId, source: 'app_store', external_id: '2000000777', amount_cents: 999, currency: 'eur', issued_at: new Date(), url: null,
  } as any).execute();
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await sms?.close();
  await stripe?.close();
});

async function page(opts: { expectedStatuses?: number[]; colorScheme?: 'light' | 'dark'; width?: number } = {}): Promise<Page> {
  const w = await open(browser, server.url, { ...opts, expectedStatuses: [401, ...(opts.expectedStatuses ?? [])] });
  pages.push(w);
  return w.page;
}

async function account(p: Page) {
  await p.goto(`${server.url}/settings/account`);
  await p.getByRole('heading', { name: 'My account', exact: true }).waitFor();
  await p.getByRole('list', { name: 'Signed-in sessions' }).waitFor();
}

async function noAxe(p: Page, label: string) {
  expect(await axe(p, label)).toEqual([]);
}

test('profile and sessions: a second session ended from the first is signed out at its next read', async () => {
  const a = await page();
  const b = await page();
  await signIn(a, server.url, owner, PASSWORD);
  await signIn(b, server.url, owner, PASSWORD);
  await account(a);
  const profile = a.getByRole('region', { name: 'Profile' });
  await profile.getByText(owner).waitFor();
  await profile.getByText('Acme Ops (owner)').waitFor();
  const sessions = a.getByRole('list', { name: 'Signed-in sessions' });
  expect(await sessions.getByRole('listitem').count()).toBe(2);
  await sessions.getByText('This session').waitFor();
  await noAxe(a, 'account');
  await shot(a, 'settings-account');

  await sessions.getByRole('button', { name: /^Sign out Chrome on Linux/ }).click();
  await until('one session left', async () => (await sessions.getByRole('listitem').count()) === 1);
  // B still shows its overview; its next read (opening Settings reads the sessions) finds the session ended.
  await b.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await b.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(new URL(b.url()).pathname).toBe('/sign-in');
}, 120_000);

test('password: the wrong current one refused at its field; the new one signs in; sign out everywhere', async () => {
  const a = await page({ expectedStatuses: [400] });
  await signIn(a, server.url, owner, PASSWORD);
  await account(a);
  const form = a.getByRole('region', { name: 'Password' });
  await form.getByLabel('Current password').fill('not the password');
  await form.getByLabel('New password').fill('a brand new password 2');
  await form.getByRole('button', { name: 'Change the password' }).click();
  const current = form.getByLabel('Current password');
  await until('the field error', async () => (await current.getAttribute('aria-invalid')) === 'true');
  await form.getByText('The current password is not right.').waitFor();
  await noAxe(a, 'password-refused');

  await current.fill(PASSWORD);
  await form.getByRole('button', { name: 'Change the password' }).click();
  await form.getByRole('status').getByText('Password changed.').waitFor();

  const c = await page();
  await signIn(c, server.url, owner, 'a brand new password 2');
  await account(c);
  await until('two sessions', async () => (await c.getByRole('list', { name: 'Signed-in sessions' }).getByRole('listitem').count()) === 2);
  await c.getByRole('button', { name: 'Sign out everywhere' }).click();
  await c.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await server.db.selectFrom('sessions').innerJoin('users', 'users.id', 'sessions.user_id').select('sessions.id').where('users.email', '=', owner).execute()).toEqual([]);
  await a.reload();
  await a.getByRole('button', { name: 'Sign in' }).waitFor();
  await setPassword(server.db, owner, PASSWORD);
}, 120_000);

test('SMS: a wrong code refused in the server\'s words, the right one (from the provider) confirms the number', async () => {
  const p = await page({ expectedStatuses: [400] });
  await signIn(p, server.url, owner, PASSWORD);
  await account(p);
  const box = p.getByRole('region', { name: 'SMS alerts to my phone' });
  await box.getByLabel('Phone number').fill('12345');
  await box.getByRole('button', { name: 'Send the code' }).click();
  const phone = box.getByLabel('Phone number');
  await until('the phone refused', async () => (await phone.getAttribute('aria-invalid')) === 'true');
  await noAxe(p, 'sms-refused');

  await phone.fill('+49 151 2345 6789');
  await box.getByLabel('Channel name (optional)').fill('My phone');
  await box.getByRole('button', { name: 'Send the code' }).click();
  await box.getByLabel('Six-digit code').waitFor();
  const [sent] = await sms.waitFor(1);
  const code = /\b(\d{6})\b/.exec(new URLSearchParams(sent.body).get('Body') ?? '')![1];
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  await box.getByLabel('Six-digit code').fill(wrong);
  await box.getByRole('button', { name: 'Confirm the number' }).click();
  await box.getByText('That code is not right; 4 tries left.').waitFor();
  expect(await box.getByLabel('Six-digit code').getAttribute('aria-invalid')).toBe('true');
  await noAxe(p, 'sms-code-refused');
  await shot(p, 'settings-account-sms');

  await box.getByLabel('Six-digit code').fill(code);
  await box.getByRole('button', { name: 'Confirm the number' }).click();
  await box.getByText('+49 151 2345 6789 is confirmed: incidents now reach it by SMS.').waitFor();
  const channel = await server.db.selectFrom('notification_channels').selectAll().where('kind', '=', 'sms').executeTakeFirstOrThrow();
  expect(channel.name).toBe('My phone');
}, 120_000);

test('incident feed: created (its URLs work), replaced (the old ones stop), revoked', async () => {
  const p = await page();
  await signIn(p, server.url, owner, PASSWORD);
  await account(p);
  const feed = p.getByRole('region', { name: 'Incident feed' });
  await feed.getByText('No feed yet.').waitFor();
  await feed.getByRole('button', { name: 'Create the feed URLs' }).click();
  const rss = feed.getByLabel('RSS feed URL', { exact: true });
  await rss.waitFor();
  const first = await rss.inputValue();
  const atom = await feed.getByLabel('Atom feed URL', { exact: true }).inputValue();
  expect(first).toMatch(/\/feeds\/incidents\/[^/]+\/feed\.xml$/);
  for (const url of [first, atom]) expect((await fetch(url)).status).toBe(200);
  await feed.getByText(/The feed is on, since/).waitFor();
  await noAxe(p, 'feed-created');
  await shot(p, 'settings-account-feed');

  await feed.getByRole('button', { name: 'Replace the URLs…' }).click();
  await feed.getByRole('button', { name: 'Replace the URLs' }).click();
  await until('new URLs', async () => (await rss.inputValue()) !== first);
  const second = await rss.inputValue();
  expect((await fetch(first)).status).toBe(404);
  expect((await fetch(second)).status).toBe(200);

  await feed.getByRole('button', { name: 'Revoke the feed…' }).click();
  await feed.getByRole('button', { name: 'Revoke the feed' }).click();
  await feed.getByText(/Feed revoked/).waitFor();
  await feed.getByText('No feed yet.').waitFor();
  expect((await fetch(second)).status).toBe(404);
  await noAxe(p, 'feed-revoked');
}, 120_000);

test('delete account: refused to the last owner with the server\'s words; done for a plain member', async () => {
  const o = await page({ expectedStatuses: [409] });
  await signIn(o, server.url, owner, PASSWORD);
  await account(o);
  const del = o.getByRole('region', { name: 'Delete my account' });
  await del.getByLabel('Type your e-mail address to confirm').fill(owner);
  await del.getByRole('button', { name: 'Delete my account' }).click();
  await del.getByRole('alert').getByText('You are the only owner of Acme Ops, which has other members: make one of them an owner first.').waitFor();
  await noAxe(o, 'delete-refused');
  await shot(o, 'settings-account-delete-refused');

  const m = await page();
  await signIn(m, server.url, member, PASSWORD);
  await account(m);
  const mine = m.getByRole('region', { name: 'Delete my account' });
  const button = mine.getByRole('button', { name: 'Delete my account' });
  expect(await button.isDisabled()).toBe(true);
  await mine.getByLabel('Type your e-mail address to confirm').fill(member.toUpperCase());
  await button.click();
  await m.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await server.db.selectFrom('users').select('id').where('id', '=', memberId).executeTakeFirst()).toBeUndefined();
}, 120_000);

test('billing: plan, usage and a checkout that goes to Stripe for the owner; no Billing for a member', async () => {
  const w = await open(browser, server.url, { expectedStatuses: [401] });
  const p = w.page;
  await signIn(p, server.url, owner, PASSWORD);
  await p.goto(`${server.url}/settings/billing`);
  await p.getByRole('heading', { name: 'Billing' }).waitFor();
  const plan = p.getByRole('region', { name: 'Plan', exact: true });
  await plan.getByText('Business').waitFor();
  await plan.getByText('Arranged with the operator').waitFor();
  const usage = p.getByRole('table', { name: 'Usage against the plan’s limits' });
  await usage.getByRole('row', { name: /Monitors/ }).waitFor();
  await p.getByText('No receipts yet: one appears here after each payment.').waitFor();
  await noAxe(p, 'billing');
  await shot(p, 'settings-billing');

  const checkoutUrl = `${stripe.url}/c/pay/cs_test_web`;
  stripe.respondWith(200, { id: 'cs_test_web', object: 'checkout.session', url: checkoutUrl });
  // Stripe's page, played by the fake: the browser is sent there.
  await p.route(checkoutUrl, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<title>Stripe Checkout</title><h1>Pay</h1>' }));
  const form = p.getByRole('region', { name: 'Change the plan' });
  await form.getByLabel('Plan').selectOption({ label: 'Pro' });
  await form.getByLabel('Add-on packs').fill('2');
  await form.getByRole('button', { name: 'Continue to payment' }).click();
  await p.waitForURL(checkoutUrl);
  const [req] = await stripe.waitFor(1);
  expect(req.path).toBe('/v1/checkout/sessions');
  const sent = new URLSearchParams(req.body);
  expect([sent.get('line_items[0][price]'), sent.get('line_items[1][price]'), sent.get('line_items[1][quantity]')]).toEqual(['price_pro_m', 'price_addon_m', '2']);
  // The one request to another origin is that redirect, on purpose.
  expect(w.foreign).toEqual([checkoutUrl]);
  w.foreign.length = 0;
  pages.push(w);

  // A member (the one of the test above deleted their account): no billing:read.
  const acme = await server.db.selectFrom('organizations').select('id').where('name', '=', 'Acme Ops').executeTakeFirstOrThrow();
  const another = await emailOf((await server.member(acme.id, 'member')).userId);
  await setPassword(server.db, another, PASSWORD);
  const m = await page();
  await signIn(m, server.url, another, PASSWORD);
  await m.goto(`${server.url}/settings`);
  await m.getByRole('heading', { name: 'My account', exact: true }).waitFor();
  const nav = m.getByRole('navigation', { name: 'Settings' });
  expect(await nav.getByRole('link', { name: 'Billing' }).count()).toBe(0);
  await m.goto(`${server.url}/settings/billing`);
  await m.getByRole('heading', { name: 'Page not found' }).waitFor();
}, 120_000);

test('an App Store subscription: explained, no web checkout; deleting the account is refused while it runs', async () => {
  const p = await page({ expectedStatuses: [409] });
  await signIn(p, server.url, storeOwner, PASSWORD);
  await p.goto(`${server.url}/settings/billing`);
  const plan = p.getByRole('region', { name: 'Plan', exact: true });
  await plan.getByText(/bought in the App Store, so only the store can change or cancel it/).waitFor();
  expect(await p.getByRole('region', { name: 'Change the plan' }).count()).toBe(0);
  await p.getByRole('region', { name: 'Receipts' }).getByText(/€|EUR/).waitFor();
  await noAxe(p, 'billing-app-store');

  await account(p);
  const del = p.getByRole('region', { name: 'Delete my account' });
  await del.getByLabel('Type your e-mail address to confirm').fill(storeOwner);
  await del.getByRole('button', { name: 'Delete my account' }).click();
  await del.getByRole('alert').getByText(/Store Co would be deleted with your account but its subscription is still running: cancel it first in the App Store/).waitFor();
  await del.getByText(/Cancel it in the App Store/).waitFor();
  await noAxe(p, 'delete-refused-store');
}, 120_000);

test('a server without an SMS provider: the enrolment refused in the server\'s words, nothing sent', async () => {
  const bare = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  try {
    const org = await bare.org({ plan: 'business' });
    const email = (await bare.db.selectFrom('users').select('email').where('id', '=', org.userId).executeTakeFirstOrThrow()).email;
    await setPassword(bare.db, email, PASSWORD);
    const w = await open(browser, bare.url, { expectedStatuses: [401, 503] });
    pages.push(w);
    const p = w.page;
    await signIn(p, bare.url, email, PASSWORD);
    await p.goto(`${bare.url}/settings/account`);
    const box = p.getByRole('region', { name: 'SMS alerts to my phone' });
    await box.getByLabel('Phone number').fill('+4915123456789');
    await box.getByRole('button', { name: 'Send the code' }).click();
    await box.getByRole('alert').getByText('This server has no SMS provider configured, so it cannot send the code; ask its operator to set one up.').waitFor();
    await box.getByText(/Nothing was sent or stored/).waitFor();
    expect(await box.getByLabel('Six-digit code').count()).toBe(0);
    await noAxe(p, 'sms-unavailable');
    await closeWatched(pages);
  } finally {
    await bare.close();
  }
}, 120_000);

test.each([['dark', 1280], ['light', 375], ['dark', 375]] as const)('my account and billing in %s at %i px: readable, no axe violation', async (scheme, width) => {
  const p = await page({ colorScheme: scheme, width });
  await signIn(p, server.url, storeOwner, PASSWORD);
  await account(p);
  await noAxe(p, `account-${scheme}-${width}`);
  await shot(p, `settings-account-${scheme}-${width}`);
  await p.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Billing' }).click();
  await p.getByRole('region', { name: 'Usage', exact: true }).waitFor();
  await noAxe(p, `billing-${scheme}-${width}`);
  await shot(p, `settings-billing-${scheme}-${width}`);
}, 120_000);
