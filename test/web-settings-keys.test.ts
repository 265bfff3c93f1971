import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { unzipSync, strFromU8 } from 'fflate';
import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { axe, closeWatched, ensureWebBuilt, launch, open, shot, signIn, type Watched } from './support/web';

// Settings → API keys, Audit log, Export. A key made in the app (one scope,
// one workspace) works with its token from outside and is refused out of its
// scope and, once revoked in the app, at all; the audit log names who made
// it, filters on the server and pages; an export downloads as a zip with its manifest and
// the hourly limit's refusal shows the server's words; a plan without the
// audit log shows what the server says; a viewer gets no write control.

const PASSWORD = 'settings keys password 1';
let server: TestServer;
let browser: Browser;
let owner: ApiClient;
let ownerEmail: string;
let viewerEmail: string;
let proEmail: string;
let opsWorkspace: string;
let defaultWorkspace: string;
const pages: Watched[] = [];

async function emailOf(userId: string): Promise<string> {
  return (await server.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow()).email;
}

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const org = await server.org({ plan: 'enterprise' });
  owner = server.api(org.apiKey);
  defaultWorkspace = org.workspaceId;
  ownerEmail = await emailOf(org.userId);
  await setPassword(server.db, ownerEmail, PASSWORD);
  opsWorkspace = ok('createWorkspace', await owner.post('/workspaces', { name: 'Ops' }), 201).id;
  for (const [name, ws] of [['Default site', defaultWorkspace], ['Ops site', opsWorkspace]] as const) {
    ok('createMonitor', await owner.post('/monitors', { name, kind: 'tcp', workspaceId: ws, intervalSeconds: 3600, config: JSON.stringify({ host: '127.0.0.1', port: 9 }) }), 201);
  }
  const viewer = await server.member(org.organizationId, 'viewer');
  viewerEmail = await emailOf(viewer.userId);
  await setPassword(server.db, viewerEmail, PASSWORD);
  const pro = await server.org({ plan: 'pro' });
  proEmail = await emailOf(pro.userId);
  await setPassword(server.db, proEmail, PASSWORD);
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signedIn(email: string, opts: Parameters<typeof open>[2] = {}): Promise<Page> {
  const w = await open(browser, server.url, { ...opts, expectedStatuses: [401, ...(opts.expectedStatuses ?? [])] });
  pages.push(w);
  await signIn(w.page, server.url, email, PASSWORD);
  return w.page;
}

/** Opens a Settings section from the app's own navigation. */
async function section(p: Page, title: string): Promise<void> {
  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await p.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: title }).click();
  await p.getByRole('heading', { name: title, level: 2 }).waitFor();
}

test('a key made in the app: its token shown once, it works within its scope and workspace, and revoked it is refused', async () => {
  // The 400 is the server refusing a blank name, on purpose.
  const p = await signedIn(ownerEmail, { expectedStatuses: [400] });
  await section(p, 'API keys');
  const list = p.getByRole('region', { name: 'API keys list' });
  await list.getByRole('listitem').first().waitFor();
  expect(await axe(p, 'api-keys')).toEqual([]);

  await p.getByLabel('Key name').fill('   ');
  await p.getByRole('button', { name: 'Create the key' }).click();
  await p.getByText('must be 1 to 100 characters').waitFor();
  expect(await p.getByLabel('Key name').getAttribute('aria-invalid')).toBe('true');
  expect(await axe(p, 'api-keys-refused')).toEqual([]);
  await p.getByLabel('Key name').fill('CI reader');
  await p.getByLabel('Only the permissions I tick').check();
  await p.getByRole('checkbox', { name: 'monitor:read' }).check();
  await p.getByLabel('Only the workspaces I tick').check();
  await p.getByRole('checkbox', { name: 'Ops', exact: true }).check();
  await p.getByLabel('Expires').selectOption({ label: 'In 30 days' });
  await p.getByRole('button', { name: 'Create the key' }).click();
  const tokenBox = p.getByRole('textbox', { name: 'Token of “CI reader”' });
  await tokenBox.waitFor();
  const token = await tokenBox.inputValue();
  expect(token).toMatch(/^vk_/);
  await p.getByText('it will not be shown again').waitFor();
  await p.getByRole('button', { name: 'Copy the token' }).click();
  await p.getByText('Copied.').waitFor();
  expect(await p.evaluate(() => navigator.clipboard.readText())).toBe(token);
  const row = list.getByRole('listitem', { name: 'Key CI reader' });
  await row.getByText('monitor:read').waitFor();
  await row.getByText('Ops', { exact: true }).waitFor();
  expect(await axe(p, 'api-keys-token')).toEqual([]);
  await shot(p, 'settings-api-keys-token');

  // From outside, with the token: monitors of its workspace only; a write is refused naming the permission.
  const key = server.api(token);
  const monitors = ok('listMonitors', await key.get('/monitors')) as Array<{ name: string }>;
  expect(monitors.map((m) => m.name)).toEqual(['Ops site']);
  const write = await key.post('/monitors', { name: 'Nope', kind: 'tcp', workspaceId: opsWorkspace, intervalSeconds: 3600, config: JSON.stringify({ host: '127.0.0.1', port: 9 }) });
  expect({ status: write.status, permission: write.body.vars?.permission }).toEqual({ status: 403, permission: 'monitor:create' });
  // Used: the list says when, once read again.
  await p.getByRole('button', { name: 'I have saved the token' }).click();
  expect(await tokenBox.count()).toBe(0);
  await p.reload();
  await row.getByText('Last used').waitFor();
  expect(await row.getByText('Never', { exact: true }).count()).toBe(0);
  expect(await p.content()).not.toContain(token);

  await row.getByRole('button', { name: 'Revoke CI reader' }).click();
  const confirm = row.getByRole('group', { name: 'Revoke CI reader' });
  await confirm.getByText('this cannot be undone').waitFor();
  expect(await axe(p, 'api-keys-confirm')).toEqual([]);
  await confirm.getByRole('button', { name: 'Yes, revoke CI reader' }).click();
  await row.getByText('Revoked', { exact: true }).first().waitFor();
  expect(await row.getByRole('button', { name: 'Revoke CI reader' }).count()).toBe(0);
  expect((await key.get('/monitors')).status).toBe(401);
}, 120_000);

test('the audit log filters on the server: matches beyond the first page, one read per change, kept in the address', async () => {
  // More than a page (50): workspace renames made with the organisation's key, newer than the key made in the app.
  for (let i = 0; i < 55; i++) ok('updateWorkspace', await owner.patch(`/workspaces/${defaultWorkspace}`, { name: `Default ${i}` }));
  // The 400 is the server refusing a malformed action, on purpose.
  const p = await signedIn(ownerEmail, { expectedStatuses: [400] });
  const reads: string[] = [];
  p.on('request', (r) => { if (new URL(r.url()).pathname === '/api/v1/audit') reads.push(r.url()); });
  await section(p, 'Audit log');
  const entries = p.getByRole('region', { name: 'Audit entries' });
  const rows = entries.locator(':scope > ul > li');
  await p.getByText('50 entries shown, newest first. Older entries: load them below.').waitFor();
  // The first page is all renames: the key's creation and revocation are not on it.
  expect(await entries.getByText('api_key.created').count()).toBe(0);
  expect(await entries.getByText('api_key.revoked').count()).toBe(0);
  expect(await axe(p, 'audit-log')).toEqual([]);

  // Filtering asks the server: both key entries, from beyond the first page, and nothing else; one read.
  const before = reads.length;
  await p.getByLabel('Action').fill('api_key.created, api_key.revoked');
  await p.getByRole('button', { name: 'Apply the filters' }).click();
  await p.getByText('2 matching entries shown, newest first. That is every matching entry.').waitFor();
  expect(reads.length - before).toBe(1);
  expect(new URL(reads[reads.length - 1]).searchParams.get('action')).toBe('api_key.created,api_key.revoked');
  expect(await rows.count()).toBe(2);
  const created = rows.filter({ hasText: 'api_key.created' });
  await created.getByText(`By ${ownerEmail}`).waitFor();
  await created.getByText('scopes: — → monitor:read').waitFor();
  await created.getByText('workspaceIds: — → Ops').waitFor();
  await rows.filter({ hasText: 'api_key.revoked' }).getByText('revoked: false → true').waitFor();
  expect(new URL(p.url()).searchParams.get('action')).toBe('api_key.created,api_key.revoked');
  expect(await axe(p, 'audit-log-filtered')).toEqual([]);

  // The address is the filter: a reload reads the same, and the form shows it.
  await p.reload();
  await p.getByText('2 matching entries shown, newest first. That is every matching entry.').waitFor();
  expect(await p.getByLabel('Action').inputValue()).toBe('api_key.created,api_key.revoked');

  // Who: the organisation's key (the renames and its other changes, not the session's key entries), paged with the filter.
  await p.getByRole('button', { name: 'Clear the filters' }).click();
  await p.getByText('50 entries shown, newest first.', { exact: false }).waitFor();
  const who = p.getByLabel('Who');
  const keyActor = (await who.locator('option').allTextContents()).find((t) => t.startsWith('API key') && t.endsWith(`of ${ownerEmail}`) && !t.includes('CI reader'))!;
  expect(keyActor).toBeDefined();
  await who.selectOption(keyActor);
  const beforeWho = reads.length;
  await p.getByRole('button', { name: 'Apply the filters' }).click();
  await p.getByText('50 matching entries shown, newest first. Older matching entries: load them below.').waitFor();
  await entries.getByRole('button', { name: 'Load older entries' }).click();
  await p.getByText(/^5[5-9] matching entries shown, newest first\. That is every matching entry\.$/).waitFor();
  expect(reads.length - beforeWho).toBe(2);
  for (const u of reads.slice(beforeWho)) expect(new URL(u).searchParams.get('actor')).toMatch(/^key_/);
  expect(await entries.getByText('api_key.created').count()).toBe(0);

  // Record type and today's days, combined with Who cleared: the two key entries again.
  await who.selectOption('');
  await p.getByLabel('Record type').fill('api_key');
  const today = await p.evaluate(() => { const d = new Date(); return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`; });
  await p.getByLabel('From (day)').fill(today);
  await p.getByLabel('To (day, included)').fill(today);
  await p.getByRole('button', { name: 'Apply the filters' }).click();
  await p.getByText('2 matching entries shown, newest first. That is every matching entry.').waitFor();
  const last = new URL(reads[reads.length - 1]).searchParams;
  expect(Date.parse(last.get('to')!) - Date.parse(last.get('from')!)).toBeGreaterThanOrEqual(23 * 3_600_000);

  // A value the server refuses: its words at the field.
  await p.getByLabel('Action').fill('monitor created');
  await p.getByRole('button', { name: 'Apply the filters' }).click();
  await p.getByText(/Invalid query parameter action: "monitor created" is not an action name/).waitFor();
  expect(await p.getByLabel('Action').getAttribute('aria-invalid')).toBe('true');
  expect(await axe(p, 'audit-log-refused')).toEqual([]);
}, 120_000);

test('an export downloads as a zip with its manifest; the hourly limit is stated and its refusal shown in the server\'s words', async () => {
  const p = await signedIn(ownerEmail, { expectedStatuses: [429] });
  await section(p, 'Export');
  await p.getByText('6 times an hour').waitFor();
  expect(await axe(p, 'export')).toEqual([]);
  await p.getByLabel('JSON').check();
  const [download] = await Promise.all([p.waitForEvent('download'), p.getByRole('button', { name: 'Export and download' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^vigil-export-\d{4}-\d{2}-\d{2}\.zip$/);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-export-')), download.suggestedFilename());
  await download.saveAs(file);
  const zip = unzipSync(new Uint8Array(fs.readFileSync(file)));
  const manifest = JSON.parse(strFromU8(zip['manifest.json']!));
  expect(manifest.format).toBe('json');
  const monitorsFile = manifest.files.find((f: { entity: string }) => f.entity === 'monitors');
  expect(monitorsFile).toMatchObject({ file: 'monitors.json', rows: 2 });
  expect(JSON.parse(strFromU8(zip['monitors.json']!)).map((m: { name: string }) => m.name).sort()).toEqual(['Default site', 'Ops site']);
  expect(manifest.files.map((f: { entity: string }) => f.entity)).toContain('audit-log');
  await p.getByText(/^Downloaded vigil-export-/).waitFor();
  await p.getByText(/This browser started 1 in the last hour, so at most 5 remain/).waitFor();

  // One entity, as CSV.
  await p.getByLabel('What').selectOption({ label: 'Monitors' });
  await p.getByLabel('CSV (spreadsheets)').check();
  const [csv] = await Promise.all([p.waitForEvent('download'), p.getByRole('button', { name: 'Export and download' }).click()]);
  expect(csv.suggestedFilename()).toMatch(/^vigil-monitors-\d{4}-\d{2}-\d{2}\.csv$/);
  const csvText = fs.readFileSync(await csv.path(), 'utf8');
  expect(csvText.split('\n')[0]).toContain('name');

  // Spend the rest of the hour's budget from outside, then the page's export is refused with the server's words.
  for (let i = 0; i < 4; i++) expect((await owner.get('/export/hosts')).status).toBe(200);
  await p.getByRole('button', { name: 'Export and download' }).click();
  await p.getByRole('alert').getByText(/^Vigil says: “Rate limit exceeded; retry in \d+ seconds\.”$/).waitFor();
  await p.getByText(/Vigil refused the last export for the hour: exports are possible again at/).waitFor();
  // Not the app-wide banner: reads are not limited.
  expect(await p.getByText('Too many requests.').count()).toBe(0);
  expect(await axe(p, 'export-refused')).toEqual([]);
}, 120_000);

test('on a plan without the audit log the page says so in the server\'s words', async () => {
  const p = await signedIn(proEmail, { expectedStatuses: [403] });
  await section(p, 'Audit log');
  await p.getByText(/does not include the audit log; it comes with the Business plan and above/).waitFor();
  await p.getByText(/Vigil says: “.*audit_log:read.*”/).waitFor();
  expect(await axe(p, 'audit-log-plan')).toEqual([]);
  await shot(p, 'settings-audit-log-plan');
}, 60_000);

test('a viewer sees Export but neither API keys nor the audit log, and no write control', async () => {
  const p = await signedIn(viewerEmail);
  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  const nav = p.getByRole('navigation', { name: 'Settings' });
  await nav.getByRole('link', { name: 'Export' }).waitFor();
  expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
  expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
  // Settings opens on My account: go to Export.
  await nav.getByRole('link', { name: 'Export' }).click();
  await p.getByRole('heading', { name: 'Export', level: 2 }).waitFor();
  const buttons = (await p.getByRole('button').allTextContents()).map((b) => b.trim());
  // Exporting reads; nothing here writes.
  expect(buttons.filter((b) => !['Sign out', 'Refresh', 'Export and download'].includes(b))).toEqual([]);
  expect(await axe(p, 'export-viewer')).toEqual([]);
  await p.goto(`${server.url}/settings/api-keys`);
  await p.getByRole('heading', { name: /not found/i }).waitFor();
}, 60_000);

test.each([['light', 1280], ['dark', 1280], ['light', 375]] as const)('screenshots (%s, %i px)', async (scheme, width) => {
  const p = await signedIn(ownerEmail, { colorScheme: scheme, width });
  const suffix = width === 375 ? 'narrow' : scheme;
  for (const [title, name] of [['API keys', 'api-keys'], ['Audit log', 'audit-log'], ['Export', 'export']] as const) {
    await section(p, title);
    if (name !== 'export') await p.getByRole('region', { name: name === 'api-keys' ? 'API keys list' : 'Audit entries' }).getByRole('listitem').first().waitFor();
    // The log filtered to keys: a screenshot of a page, not of 55 renames.
    if (name === 'audit-log') {
      await p.getByLabel('Record type').fill('api_key');
      await p.getByRole('button', { name: 'Apply the filters' }).click();
      await p.getByText(/^\d+ matching entries shown, newest first\. That is every matching entry\.$/).waitFor();
    }
    expect(await axe(p, `${name}-${suffix}`)).toEqual([]);
    // Nothing wider than the screen (a long key name, e-mail or id wraps).
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await shot(p, `settings-${name}-${suffix}`);
  }
}, 120_000);
