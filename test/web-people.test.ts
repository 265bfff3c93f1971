import type { Browser, Page } from 'playwright-core';
import { addMember, setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startSmtpServer, type SmtpReceiver } from './support/receivers';
import { axe, closeWatched, ensureWebBuilt, launch, open, shot, signIn, type Watched } from './support/web';

// Settings → Members and Workspaces through the app: an invitation confined
// to one workspace goes out by e-mail (a local SMTP sink), the invitee joins
// through the link and sees that workspace only; roles change, and the
// server's refusals (last owner, a role above one's own) appear in its own
// words; invitations are resent and withdrawn, members removed, workspaces
// made, renamed and deleted; a viewer finds no write control.

const PASSWORD = 'people test password 1';
const INVITEE = 'newcomer@example.test';
const LINK = /https?:\/\/\S+\/invitations\/inv_[A-Za-z0-9_-]+/;
/** Buttons that change nothing on the server. */
const READ_ONLY_BUTTONS = new Set(['Sign out', 'Refresh', 'Try again']);

let smtp: SmtpReceiver;
let server: TestServer;
let api: ApiClient;
let browser: Browser;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let ownerEmail: string;
let teamB: string;
/** The owner's page, open for the whole file; the 403 and 409 are refusals the scenario provokes. */
let owner: Watched;
const pages: Watched[] = [];

async function person(role: string, workspaceIds?: string[]) {
  const m = await server.member(org.organizationId, role, workspaceIds);
  const { email } = await server.db.selectFrom('users').select('email').where('id', '=', m.userId).executeTakeFirstOrThrow();
  await setPassword(server.db, email, PASSWORD);
  return { ...m, email };
}

async function visit(opts: Parameters<typeof open>[2] = {}): Promise<Page> {
  const w = await open(browser, server.url, { expectedStatuses: [401, 403, 409], ...opts });
  pages.push(w);
  return w.page;
}

async function members() {
  return ok('listMembers', await api.get('/members')) as { members: Array<{ id: string; email: string; role: string; workspaceIds: string[] | null }>; invitations: Array<{ email: string }> };
}

/** The names of the page's buttons, check boxes and fields that would write. */
async function writeControls(p: Page): Promise<string[]> {
  const main = p.locator('main');
  const buttons = await main.getByRole('button').evaluateAll((els) => els.map((e) => (e.getAttribute('aria-label') ?? e.textContent ?? '').trim()));
  const inputs = await main.locator('input, select, textarea').count();
  return [...buttons.filter((b) => !READ_ONLY_BUTTONS.has(b)), ...(inputs ? [`${inputs} fields`] : [])];
}

async function settings(p: Page, section: 'members' | 'workspaces') {
  await p.goto(`${server.url}/settings/${section}`);
  await p.getByRole('heading', { level: 2, name: section === 'members' ? 'Members' : 'Workspaces' }).waitFor();
  await p.getByRole('heading', { level: 3, name: section === 'members' ? /^People/ : /workspaces \(/ }).waitFor();
}

async function nextMail(before: number) {
  const [mail] = (await smtp.waitFor(before + 1, 30_000)).slice(before);
  return mail!;
}

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  smtp = await startSmtpServer();
  server = await startTestServer({ SMTP_URL: smtp.url, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise', name: 'Acme' });
  api = server.api(org.apiKey);
  teamB = ok('createWorkspace', await api.post('/workspaces', { name: 'Team B' }), 201).id;
  ownerEmail = (await members()).members[0]!.email;
  await setPassword(server.db, ownerEmail, PASSWORD);
  owner = await open(browser, server.url, { expectedStatuses: [401, 403, 409] });
  await signIn(owner.page, server.url, ownerEmail, PASSWORD);
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  expect({ problems: owner?.problems, foreign: owner?.foreign }).toEqual({ problems: [], foreign: [] });
  await owner?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.close();
  await smtp?.close();
});

test('an owner invites a member confined to Team B; the invitee joins by the e-mailed link and sees Team B only', async () => {
  const p = owner.page;
  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await p.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Members' }).click();
  await p.getByRole('heading', { level: 2, name: 'Members' }).waitFor();
  await p.getByText('No invitation is waiting.').waitFor();
  expect(await axe(p, 'members, no invitation')).toEqual([]);

  const before = smtp.messages.length;
  const form = p.getByRole('region', { name: 'Invite a person' });
  await form.getByLabel('E-mail address').fill(INVITEE);
  await form.getByLabel('Role').selectOption({ label: 'Member' });
  await form.getByRole('checkbox', { name: 'Team B' }).check();
  await form.getByRole('button', { name: 'Send the invitation' }).click();
  await form.getByRole('status').getByText(`Invited ${INVITEE} as Member`).waitFor();
  const pending = p.getByRole('region', { name: 'Pending invitations' }).getByRole('listitem').filter({ hasText: INVITEE });
  await pending.getByText('Workspace: Team B').waitFor();
  expect(await axe(p, 'members, one invitation')).toEqual([]);

  const mail = await nextMail(before);
  expect(mail.to).toEqual([INVITEE]);
  const link = LINK.exec(mail.text)![0];

  // A fresh browser: the link's page, a name and a password, and the app signed in (the page names
  // the app's icon, so nothing asks for a missing /favicon.ico).
  const q = await visit({ expectedStatuses: [401] });
  await q.goto(link);
  await q.getByRole('heading', { name: 'Join Acme on Vigil' }).waitFor();
  await q.getByLabel('Your name').fill('Nina Newcomer');
  await q.getByLabel('Choose a password').fill(PASSWORD);
  await q.getByRole('button', { name: 'Accept the invitation' }).click();
  await q.getByRole('heading', { name: 'Welcome to Acme' }).waitFor();
  await q.getByRole('link', { name: 'Continue to Vigil' }).click();
  await q.getByRole('heading', { name: 'Overview' }).waitFor();
  await settings(q, 'workspaces');
  const listed = q.getByRole('region', { name: /Your workspaces/ }).getByRole('listitem');
  expect(await listed.allTextContents()).toEqual([expect.stringContaining('Team B')]);
  // Confined: an organisation-wide change is not offered.
  expect(await writeControls(q)).toEqual([]);
  expect(await axe(q, 'confined workspaces')).toEqual([]);
  await settings(q, 'members');
  await q.getByRole('listitem').filter({ hasText: 'Nina Newcomer' }).getByText('Workspace: Team B').waitFor();
  expect(await axe(q, 'confined members')).toEqual([]);

  // The owner's list, read again: Nina is a member, the invitation is gone.
  await p.reload();
  const nina = p.getByRole('region', { name: /^People/ }).getByRole('listitem').filter({ hasText: 'Nina Newcomer' });
  await nina.getByText('Workspace: Team B').waitFor();
  await p.getByText('No invitation is waiting.').waitFor();
  expect((await members()).members.find((m) => m.email === INVITEE)).toMatchObject({ role: 'member', workspaceIds: [teamB] });
}, 180_000);

test('a role changes; the last owner and a role above one\'s own are refused in the server\'s words', async () => {
  const p = owner.page;
  await settings(p, 'members');
  const nina = p.getByRole('listitem').filter({ hasText: 'Nina Newcomer' });
  await nina.getByLabel('Role of Nina Newcomer', { exact: true }).selectOption({ label: 'Viewer' });
  await nina.getByRole('button', { name: 'Change role of Nina Newcomer' }).click();
  await nina.getByRole('status').getByText('Now Viewer.').waitFor();
  expect((await members()).members.find((m) => m.email === INVITEE)?.role).toBe('viewer');

  // The sole owner demoting themselves: the server's 409, word for word.
  const self = (await members()).members.find((m) => m.email === ownerEmail)!;
  const lastOwner = await api.patch(`/members/${self.id}`, { role: 'admin' });
  expect(lastOwner.body.code).toBe('last_owner');
  const mine = p.getByRole('listitem').filter({ hasText: '(you)' });
  await mine.getByLabel(`Role of ${ownerEmail}`, { exact: true }).selectOption({ label: 'Admin' });
  await mine.getByRole('button', { name: `Change role of ${ownerEmail}` }).click();
  await mine.getByRole('alert').getByText(lastOwner.body.error, { exact: true }).waitFor();
  expect(await axe(p, 'last owner refused')).toEqual([]);
  await shot(p, 'web-people-last-owner');

  // An admin touching the owner: the server's 403, word for word.
  const admin = await person('admin');
  const aboveOwn = await server.api(admin.apiKey).patch(`/members/${self.id}`, { role: 'viewer' });
  expect(aboveOwn.body.code).toBe('role_above_own');
  const a = await visit();
  await signIn(a, server.url, admin.email, PASSWORD);
  await settings(a, 'members');
  const ownerRow = a.getByRole('listitem').filter({ hasText: ownerEmail });
  await ownerRow.getByLabel(`Role of ${ownerEmail}`, { exact: true }).selectOption({ label: 'Viewer' });
  await ownerRow.getByRole('button', { name: `Change role of ${ownerEmail}` }).click();
  await ownerRow.getByRole('alert').getByText(aboveOwn.body.error, { exact: true }).waitFor();
  // Inviting an owner is above an admin too: the sentence, and the reason at the Role field.
  const form = a.getByRole('region', { name: 'Invite a person' });
  await form.getByLabel('E-mail address').fill('boss@example.test');
  await form.getByLabel('Role').selectOption({ label: 'Owner' });
  await form.getByRole('button', { name: 'Send the invitation' }).click();
  await form.getByRole('alert').getByText(/it cannot invite to a role above it \(owner\)/).waitFor();
  expect(await form.getByLabel('Role').getAttribute('aria-invalid')).toBe('true');
  expect(await axe(a, 'role above own refused')).toEqual([]);
  expect((await members()).members.find((m) => m.email === ownerEmail)?.role).toBe('owner');
}, 180_000);

test('an invitation is resent (only the new link works) and withdrawn (no link works)', async () => {
  const p = owner.page;
  await settings(p, 'members');
  const email = 'later@example.test';
  let before = smtp.messages.length;
  const form = p.getByRole('region', { name: 'Invite a person' });
  await form.getByLabel('E-mail address').fill(email);
  await form.getByLabel('Role').selectOption({ label: 'Viewer' });
  await form.getByRole('button', { name: 'Send the invitation' }).click();
  const first = LINK.exec((await nextMail(before)).text)![0];
  const row = p.getByRole('region', { name: 'Pending invitations' }).getByRole('listitem').filter({ hasText: email });
  await row.getByText('All workspaces').waitFor();

  before = smtp.messages.length;
  await row.getByRole('button', { name: `Resend the invitation to ${email}` }).click();
  await row.getByRole('status').getByText('Sent again: only the new link works.').waitFor();
  const second = LINK.exec((await nextMail(before)).text)![0];
  expect(second).not.toBe(first);
  expect((await fetch(first)).status).toBe(404);
  expect((await fetch(second)).status).toBe(200);
  expect(await axe(p, 'invitation resent')).toEqual([]);
  await shot(p, 'web-people-members');

  await row.getByRole('button', { name: `Withdraw the invitation to ${email}` }).click();
  await p.getByText('No invitation is waiting.').waitFor();
  expect((await fetch(second)).status).toBe(404);
  expect((await members()).invitations).toEqual([]);
}, 120_000);

test('a member is removed', async () => {
  const p = owner.page;
  await settings(p, 'members');
  const nina = p.getByRole('region', { name: /^People/ }).getByRole('listitem').filter({ hasText: 'Nina Newcomer' });
  await nina.getByRole('button', { name: 'Remove Nina Newcomer' }).click();
  const ask = nina.getByRole('group', { name: 'Remove Nina Newcomer' });
  await ask.getByText(/^Remove Nina Newcomer from .*\? Their API keys stop working at once/).waitFor();
  expect(await axe(p, 'member remove question')).toEqual([]);
  await ask.getByRole('button', { name: 'Remove Nina Newcomer' }).click();
  await nina.waitFor({ state: 'detached' });
  expect((await members()).members.map((m) => m.email)).not.toContain(INVITEE);
  expect(await axe(p, 'member removed')).toEqual([]);
}, 60_000);

test('a workspace is created, renamed and deleted', async () => {
  const p = owner.page;
  await settings(p, 'workspaces');
  const create = p.getByRole('form', { name: 'New workspace' });
  await create.getByLabel('Name').fill('Client C');
  await create.getByLabel('Client reference').fill('C-42');
  await create.getByRole('button', { name: 'Create the workspace' }).click();
  await create.getByRole('status').getByText('Workspace “Client C” created.').waitFor();
  const list = p.getByRole('region', { name: /All workspaces/ });
  await list.getByRole('listitem').filter({ hasText: 'client reference C-42' }).getByText('Client C').waitFor();
  expect(await axe(p, 'workspace created')).toEqual([]);

  await list.getByRole('button', { name: 'Rename Client C' }).click();
  const rename = p.getByRole('form', { name: 'Rename Client C' });
  await rename.getByLabel('Name').fill('Client Charlie');
  await rename.getByLabel('Client reference').fill('');
  expect(await axe(p, 'workspace rename form')).toEqual([]);
  await rename.getByRole('button', { name: 'Save' }).click();
  const renamed = list.getByRole('listitem').filter({ hasText: 'Client Charlie' });
  await renamed.waitFor();
  const ws = (ok('listWorkspaces', await api.get('/workspaces')) as Array<{ id: string; name: string; clientReference: string | null }>).find((w) => w.name === 'Client Charlie');
  expect(ws?.clientReference).toBeNull();
  await shot(p, 'web-people-workspaces');

  // The default workspace offers no Delete (the server refuses it); Client Charlie does.
  expect(await list.getByRole('listitem').filter({ hasText: 'Default workspace' }).getByRole('button', { name: /^Delete/ }).count()).toBe(0);
  await renamed.getByRole('button', { name: 'Delete Client Charlie' }).click();
  await renamed.getByRole('group', { name: 'Delete Client Charlie' }).getByRole('button', { name: 'Delete Client Charlie' }).click();
  await renamed.waitFor({ state: 'detached' });
  expect((await api.get(`/workspaces`)).body.data.map((w: { name: string }) => w.name)).not.toContain('Client Charlie');
}, 120_000);

test('a viewer finds no write control on Members and Workspaces', async () => {
  const viewer = await person('viewer');
  const p = await visit();
  await signIn(p, server.url, viewer.email, PASSWORD);
  for (const section of ['members', 'workspaces'] as const) {
    await settings(p, section);
    expect({ section, controls: await writeControls(p) }).toEqual({ section, controls: [] });
    expect(await axe(p, `viewer ${section}`)).toEqual([]);
  }
}, 120_000);

test('an admin confined to Team B: the server\'s reasons at the Workspaces field and for an organisation role', async () => {
  const admin = await person('admin', [teamB]);
  const refused = await server.api(admin.apiKey).post('/members', { email: 'x@example.test', role: 'admin', workspaceIds: [teamB] });
  expect(refused.body.code).toBe('workspace_confined');
  const p = await visit({ expectedStatuses: [400, 401, 403] });
  await signIn(p, server.url, admin.email, PASSWORD);
  await settings(p, 'members');
  const form = p.getByRole('region', { name: 'Invite a person' });
  // Only its own workspace to tick, and none ticked is refused at the field.
  expect(await form.getByRole('checkbox').count()).toBe(1);
  await form.getByLabel('E-mail address').fill('confined-pick@example.test');
  await form.getByRole('button', { name: 'Send the invitation' }).click();
  await form.getByRole('group', { name: 'Workspaces' }).getByText('name at least one of your own workspaces (you are confined to some)').waitFor();
  expect(await form.getByRole('checkbox', { name: 'Team B' }).getAttribute('aria-invalid')).toBe('true');
  expect(await form.getByRole('alert').count()).toBe(0);
  expect(await axe(p, 'confined invite, field reason')).toEqual([]);
  await form.getByRole('checkbox', { name: 'Team B' }).check();
  await form.getByLabel('Role').selectOption({ label: 'Admin' });
  await form.getByRole('button', { name: 'Send the invitation' }).click();
  await form.getByRole('alert').getByText(refused.body.error, { exact: true }).waitFor();
  await form.getByLabel('Role').selectOption({ label: 'Member' });
  await form.getByRole('button', { name: 'Send the invitation' }).click();
  await form.getByRole('status').getByText('Invited confined-pick@example.test as Member').waitFor();
  // Within its workspace it may withdraw it too.
  await p.getByRole('button', { name: 'Withdraw the invitation to confined-pick@example.test' }).click();
  await p.getByText('No invitation is waiting.').waitFor();
  await settings(p, 'workspaces');
  expect(await writeControls(p)).toEqual([]);
  await p.getByText('someone not confined to workspaces does it').waitFor();
}, 120_000);

test('a person in two organisations sees both under Your organisations and switches from there', async () => {
  const viewer = await person('viewer');
  const other = await server.org({ plan: 'enterprise', name: 'Second org' });
  await addMember(server.db, { organizationId: other.organizationId, email: viewer.email, role: 'admin' });
  const p = await visit();
  await signIn(p, server.url, viewer.email, PASSWORD);
  await settings(p, 'members');
  const orgs = p.getByRole('region', { name: 'Your organisations' });
  await orgs.getByRole('listitem').filter({ hasText: 'Acme' }).getByText('In use now').waitFor();
  expect(await axe(p, 'two organisations')).toEqual([]);
  await orgs.getByRole('button', { name: 'Switch to Second org' }).click();
  await p.getByRole('heading', { name: 'Overview' }).waitFor();
  // An admin there: the invitation form comes with the switch.
  await settings(p, 'members');
  await p.getByRole('region', { name: 'Your organisations' }).getByRole('listitem').filter({ hasText: 'Second org' }).getByText('In use now').waitFor();
  await p.getByRole('region', { name: 'Invite a person' }).waitFor();
}, 120_000);

test('dark and 375 px: both pages readable, with no serious axe violation', async () => {
  for (const [label, opts] of [['dark', { colorScheme: 'dark' as const }], ['375', { width: 375 }]] as const) {
    const p = await visit(opts);
    await signIn(p, server.url, ownerEmail, PASSWORD);
    for (const section of ['members', 'workspaces'] as const) {
      await settings(p, section);
      expect(await axe(p, `${label} ${section}`)).toEqual([]);
      await shot(p, `web-people-${section}-${label}`);
    }
    // Nothing wider than the screen at 375 px.
    if (label === '375') expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  }
}, 180_000);
