import type { Browser, Page } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';
import { axe, ensureWebBuilt, launch, open, shot, signIn, type Watched, closeWatched } from './support/web';

// Changing channels in the web app: a channel switched off and on again,
// deleted after a confirmation (Cancel keeps it); a webhook's name and URL
// edited in place (a bad URL refused at its field, then a test delivery
// reaching the new URL) and an e-mail channel's address changed (unconfirmed
// again, one confirmation message to the new address) — each checked through
// the API; a channel deleted behind the page's back answers with the
// server's words; a member confined to a workspace changes only that
// workspace's channels and cannot make an organisation-wide one.

const PASSWORD = 'channels edit password 1';
let server: TestServer;
let api: ApiClient;
let browser: Browser;
let hook: HttpReceiver;
let smtp: SmtpReceiver;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
const emails = { owner: '', confined: '' };
const pages: Watched[] = [];

async function emailOf(userId: string) {
  return (await server.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow()).email;
}

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  hook = await startHttpReceiver();
  smtp = await startSmtpServer();
  server = await startTestServer({ SMTP_URL: smtp.url, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
  emails.owner = await emailOf(org.userId);
  emails.confined = await emailOf((await server.member(org.organizationId, 'member', [org.workspaceId])).userId);
  for (const e of Object.values(emails)) await setPassword(server.db, e, PASSWORD);
  ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'Ops hook', target: 'https://hooks.example.test/vigil', workspaceId: null }), 201);
  ok('createChannel', await api.post('/channels', { kind: 'email', name: 'Team inbox', target: 'team@example.test', workspaceId: org.workspaceId }), 201);
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await hook?.close();
  await smtp?.close();
});

async function as(who: keyof typeof emails, opts: Parameters<typeof open>[2] = {}): Promise<Page> {
  const w = await open(browser, server.url, { expectedStatuses: [401], ...opts });
  pages.push(w);
  await signIn(w.page, server.url, emails[who], PASSWORD);
  await w.page.goto(`${server.url}/channels`);
  return w.page;
}

type Stored = { id: string; name: string; target: string; enabled: boolean; confirmed: boolean };
const stored = async (name: string) => (ok('listChannels', await api.get('/channels')) as Stored[]).find((c) => c.name === name);
/** The confirmation links mailed to `to`, oldest first. */
const links = (to: string) => smtp.messages.filter((m) => m.to.includes(to)).map((m) => /\/confirm\/[A-Za-z0-9_-]+/.exec(m.text)?.[0]).filter(Boolean) as string[];

test('a channel switched off and on, and deleted after a confirmation', async () => {
  const p = await as('owner');
  const list = p.getByRole('region', { name: 'Channels list' });
  const row = list.getByRole('listitem').filter({ hasText: 'Ops hook' });
  await row.getByRole('button', { name: 'Switch off Ops hook' }).click();
  await row.getByText('Off', { exact: true }).waitFor();
  expect((await stored('Ops hook'))!.enabled).toBe(false);
  expect(await axe(p, 'channels-off')).toEqual([]);
  await shot(p, 'channels-edit-light');
  await row.getByRole('button', { name: 'Switch on Ops hook' }).click();
  await row.getByText('Confirmed').waitFor();
  expect((await stored('Ops hook'))!.enabled).toBe(true);

  const inbox = list.getByRole('listitem').filter({ hasText: 'Team inbox' });
  await inbox.getByRole('button', { name: 'Delete Team inbox' }).click();
  const ask = inbox.getByRole('group', { name: 'Delete Team inbox' });
  await ask.getByText('It is removed from every monitor.').waitFor();
  expect(await axe(p, 'channels-delete-question')).toEqual([]);
  await shot(p, 'channels-delete-question');
  await ask.getByRole('button', { name: 'Cancel' }).click();
  await inbox.getByRole('button', { name: 'Delete Team inbox' }).waitFor();
  expect(await stored('Team inbox')).toBeDefined();
  await inbox.getByRole('button', { name: 'Delete Team inbox' }).click();
  await inbox.getByRole('button', { name: 'Delete the channel' }).click();
  await until('the row gone', async () => (await list.getByText('Team inbox').count()) === 0);
  expect(await stored('Team inbox')).toBeUndefined();
}, 90_000);

test('a webhook\'s name and URL and an e-mail address edited in place; a bad URL refused at its field', async () => {
  ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'Deploy hook', target: 'https://hooks.example.test/deploy', workspaceId: null }), 201);
  ok('createChannel', await api.post('/channels', { kind: 'email', name: 'Billing inbox', target: 'billing@example.test', workspaceId: org.workspaceId }), 201);
  // The address agrees first (its mailed link), so that the change visibly makes it unconfirmed again.
  await until('the confirmation mail', async () => links('billing@example.test').length === 1);
  expect((await fetch(`${server.url}${links('billing@example.test')[0]}`)).status).toBe(200);
  expect((await stored('Billing inbox'))!.confirmed).toBe(true);

  // The 400 is the server refusing the URL, on purpose.
  const p = await as('owner', { expectedStatuses: [401, 400] });
  const list = p.getByRole('region', { name: 'Channels list' });
  const hookRow = list.getByRole('listitem').filter({ hasText: 'Deploy hook' });
  await hookRow.getByRole('button', { name: 'Edit Deploy hook' }).click();
  const form = hookRow.getByRole('form', { name: 'Edit Deploy hook' });
  const url = form.getByLabel('URL (https:// or http://)');
  // The URL is a credential the server never returns: the field starts empty and says what it is now.
  expect(await url.inputValue()).toBe('');
  await form.getByText('Now https://hooks.example.test/…').waitFor();
  expect(await p.evaluate(() => document.activeElement?.tagName === 'INPUT' && (document.activeElement as HTMLInputElement).value === 'Deploy hook')).toBe(true);
  await form.getByLabel('Channel name').fill('Release hook');
  await url.fill('ftp://files.example.test/x');
  await form.getByRole('button', { name: 'Save the channel' }).click();
  await until('the URL refused at its field', async () => (await url.getAttribute('aria-invalid')) === 'true');
  expect(await form.getByRole('alert').count()).toBe(0);
  expect(await axe(p, 'channel-edit-error')).toEqual([]);
  await shot(p, 'channel-edit-error-light');
  expect(await stored('Deploy hook')).toMatchObject({ target: 'https://hooks.example.test/…' });

  await url.fill(`${hook.url}/release`);
  await form.getByRole('button', { name: 'Save the channel' }).click();
  const released = list.getByRole('listitem').filter({ hasText: 'Release hook' });
  await released.getByText('Saved.').waitFor();
  await until('the focus back on Edit', () => p.evaluate(() => document.activeElement?.getAttribute('aria-label') === 'Edit Release hook'));
  expect(await stored('Deploy hook')).toBeUndefined();
  expect(await stored('Release hook')).toMatchObject({ target: `${hook.url}/…`, confirmed: true, enabled: true });
  // The stored URL is the new one: a test delivery reaches it.
  await released.getByRole('button', { name: 'Send a test to Release hook' }).click();
  await released.getByText('Delivered.').waitFor();
  const [delivery] = await hook.waitFor(1);
  expect(delivery!.path).toBe('/release');

  const inbox = list.getByRole('listitem').filter({ hasText: 'Billing inbox' });
  await inbox.getByText('Confirmed').waitFor();
  await inbox.getByRole('button', { name: 'Edit Billing inbox' }).click();
  const mail = inbox.getByRole('form', { name: 'Edit Billing inbox' });
  const address = mail.getByLabel('E-mail address');
  expect(await address.inputValue()).toBe('billing@example.test');
  await address.fill('finance@example.test');
  expect(await axe(p, 'channel-edit-email')).toEqual([]);
  await mail.getByRole('button', { name: 'Save the channel' }).click();
  await inbox.getByText('Not confirmed yet').waitFor();
  await inbox.getByText('Saved. The address gets one message asking to confirm; nothing else until it agrees.').waitFor();
  await inbox.getByText('E-mail · finance@example.test').waitFor();
  await inbox.getByRole('button', { name: 'Ask to confirm again: Billing inbox' }).waitFor();
  expect(await stored('Billing inbox')).toMatchObject({ target: 'finance@example.test', confirmed: false });
  await until('the new address asked', async () => links('finance@example.test').length === 1);
  expect(await axe(p, 'channel-edited')).toEqual([]);
  await shot(p, 'channel-edited-light');
}, 90_000);

test('a channel deleted behind the page\'s back: the server\'s words where the change was made', async () => {
  const gone = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'Old hook', target: 'https://old.example.test/x', workspaceId: null }), 201);
  // The 404 is the server answering for a channel that no longer exists, on purpose.
  const p = await as('owner', { expectedStatuses: [401, 404] });
  const row = p.getByRole('region', { name: 'Channels list' }).getByRole('listitem').filter({ hasText: 'Old hook' });
  await row.waitFor();
  ok('deleteChannel', await api.delete(`/channels/${gone.id}`));
  await row.getByRole('button', { name: 'Switch off Old hook' }).click();
  await row.getByRole('alert').getByText('No such channel.').waitFor();
  expect(await axe(p, 'channels-error')).toEqual([]);
}, 60_000);

test('a confined member changes its workspace\'s channels, not the organisation\'s, in light, dark and at 375 px', async () => {
  ok('createChannel', await api.post('/channels', { kind: 'email', name: 'Workspace inbox', target: 'ws@example.test', workspaceId: org.workspaceId }), 201);
  for (const [scheme, width, suffix] of [['light', 1280, 'light'], ['dark', 1280, 'dark'], ['light', 375, 'phone']] as const) {
    const p = await as('confined', { colorScheme: scheme, width });
    const list = p.getByRole('region', { name: 'Channels list' });
    const mine = list.getByRole('listitem').filter({ hasText: 'Workspace inbox' });
    await mine.getByRole('button', { name: 'Switch off Workspace inbox' }).waitFor();
    await mine.getByRole('button', { name: 'Delete Workspace inbox' }).waitFor();
    const orgWide = list.getByRole('listitem').filter({ hasText: 'Ops hook' });
    await orgWide.waitFor();
    expect(await orgWide.getByRole('button').count()).toBe(0);
    await orgWide.getByText('Organisation-wide: changed by members who are not limited to workspaces.').waitFor();
    // No organisation-wide choice in the form: the server would refuse it.
    const options = await p.getByLabel('For', { exact: true }).locator('option').allTextContents();
    expect(options).not.toContain('The whole organisation');
    expect(options.length).toBeGreaterThan(0);
    expect(await axe(p, `channels-confined-${suffix}`)).toEqual([]);
    if (width === 375) expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(p, `channels-confined-${suffix}`);
    // Its workspace's channel can be edited; Cancel puts the buttons back with the focus on Edit.
    await mine.getByRole('button', { name: 'Edit Workspace inbox' }).click();
    await mine.getByRole('form', { name: 'Edit Workspace inbox' }).getByLabel('E-mail address').waitFor();
    expect(await axe(p, `channel-edit-${suffix}`)).toEqual([]);
    if (width === 375) expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(p, `channel-edit-${suffix}`);
    await mine.getByRole('button', { name: 'Cancel' }).click();
    await until('the focus back on Edit', () => p.evaluate(() => document.activeElement?.getAttribute('aria-label') === 'Edit Workspace inbox'));
  }
  const p = pages[0]!.page;
  await p.getByLabel('Channel kind').selectOption({ label: 'E-mail' });
  await p.getByLabel('Channel name').fill('Made by a confined member');
  await p.getByLabel('E-mail address').fill('confined@example.test');
  await p.getByRole('button', { name: 'Add the channel' }).click();
  await p.getByRole('region', { name: 'Channels list' }).getByText('Made by a confined member').waitFor();
  const made = (ok('listChannels', await api.get('/channels')) as Array<{ name: string; workspaceId: string | null }>).find((c) => c.name === 'Made by a confined member');
  expect(made!.workspaceId).toBe(org.workspaceId);
}, 120_000);
