import type { Browser } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { startTestServer, type TestServer } from './support/harness';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';
import { axe, ensureWebBuilt, launch, open, shot, signIn, type Watched, closeWatched } from './support/web';

// The channels page: a webhook added through the form shows its signing
// secret once and a test delivery reaches a local receiver ("Delivered."); an
// e-mail channel starts unconfirmed, its address gets one confirmation
// request, and asking again sends another; a target in the wrong format is
// refused at its field; a viewer sees the channels but no control.

const PASSWORD = 'channels test password 1';
let server: TestServer;
let browser: Browser;
let hook: HttpReceiver;
let smtp: SmtpReceiver;
let ownerEmail: string;
let viewerEmail: string;
const pages: Watched[] = [];

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  hook = await startHttpReceiver();
  smtp = await startSmtpServer();
  server = await startTestServer({ WORKER: 'true', SMTP_URL: smtp.url, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const org = await server.org({ plan: 'enterprise' });
  ownerEmail = (await server.db.selectFrom('users').select('email').where('id', '=', org.userId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, ownerEmail, PASSWORD);
  const viewer = await server.member(org.organizationId, 'viewer');
  viewerEmail = (await server.db.selectFrom('users').select('email').where('id', '=', viewer.userId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, viewerEmail, PASSWORD);
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await hook?.close();
  await smtp?.close();
});

test('a webhook and an e-mail channel added, tested and confirmed through the page', async () => {
  // The 400 is the server refusing a target, on purpose.
  const w = await open(browser, server.url, { expectedStatuses: [401, 400] });
  pages.push(w);
  const p = w.page;
  await signIn(p, server.url, ownerEmail, PASSWORD);
  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Channels' }).click();
  await p.getByText('No channel yet: incidents reach nobody.').waitFor();
  expect(await axe(p, 'channels-empty')).toEqual([]);

  await p.getByLabel('Channel kind').selectOption({ label: 'Webhook' });
  await p.getByLabel('Channel name').fill('Ops hook');
  await p.getByLabel('URL (https:// or http://)').fill('not a url');
  await p.getByRole('button', { name: 'Add the channel' }).click();
  const target = p.getByLabel('URL (https:// or http://)');
  await p.waitForFunction(() => document.querySelector('[aria-invalid=true]') !== null);
  expect(await target.getAttribute('aria-invalid')).toBe('true');
  await target.fill(`${hook.url}/vigil`);
  await p.getByRole('button', { name: 'Add the channel' }).click();
  const secret = p.getByRole('textbox', { name: 'Signing secret (shown once)' });
  await secret.waitFor();
  expect((await secret.inputValue()).length).toBeGreaterThan(10);
  const list = p.getByRole('region', { name: 'Channels list' });
  await list.getByText('Ops hook').waitFor();
  await list.getByRole('button', { name: 'Send a test to Ops hook' }).click();
  await list.getByText('Delivered.').waitFor();
  const [delivery] = await hook.waitFor(1);
  expect(delivery!.path).toBe('/vigil');

  await p.getByLabel('Channel kind').selectOption({ label: 'E-mail' });
  await p.getByLabel('Channel name').fill('On-call inbox');
  await p.getByLabel('E-mail address').fill('oncall@example.test');
  await p.getByRole('button', { name: 'Add the channel' }).click();
  const row = list.getByRole('listitem').filter({ hasText: 'On-call inbox' });
  await row.getByText('Not confirmed yet').waitFor();
  await smtp.waitFor(1, 20_000);
  await row.getByRole('button', { name: 'Ask to confirm again: On-call inbox' }).click();
  await row.getByText('Confirmation request sent.').waitFor();
  await smtp.waitFor(2, 20_000);
  expect(smtp.messages.every((m) => m.to.includes('oncall@example.test'))).toBe(true);
  expect(await axe(p, 'channels')).toEqual([]);
  await shot(p, 'channels-light');
}, 90_000);

test('a viewer sees the channels and no control', async () => {
  const w = await open(browser, server.url, { expectedStatuses: [401] });
  pages.push(w);
  const p = w.page;
  await signIn(p, server.url, viewerEmail, PASSWORD);
  await p.goto(`${server.url}/channels`);
  await p.getByRole('region', { name: 'Channels list' }).getByText('Ops hook').waitFor();
  const buttons = await p.getByRole('button').allTextContents();
  expect(buttons.filter((b) => !['Sign out', 'Refresh'].includes(b.trim()))).toEqual([]);
  expect(await p.getByRole('heading', { name: 'Add a channel' }).count()).toBe(0);
  expect(await axe(p, 'channels-viewer')).toEqual([]);
}, 60_000);
