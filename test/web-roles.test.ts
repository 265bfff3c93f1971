import type { Browser, Page } from 'playwright-core';
import { addMember, setPassword } from '../src/domain/organizations';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { axe, ensureWebBuilt, launch, open, signIn, type Watched, closeWatched } from './support/web';

// What the app shows follows /me: a viewer finds no write control on any
// page, and a member confined to one workspace sees only that workspace's
// monitors and incidents (the server filters; the app must not widen it).

const PASSWORD = 'role test password 1';
/** Buttons that change nothing on the server. */
const READ_ONLY_BUTTONS = new Set(['Sign out', 'Refresh', 'Try again', '24 hours', '3 days', '7 days', 'Unresolved', 'Resolved', 'All']);

let server: TestServer;
let api: ApiClient;
let browser: Browser;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let otherWs: string;
const ids: Record<string, { monitorId: string; incidentId: string }> = {};
const pages: Watched[] = [];

async function person(role: string, workspaceIds?: string[]): Promise<string> {
  const m = await server.member(org.organizationId, role, workspaceIds);
  const { email } = await server.db.selectFrom('users').select('email').where('id', '=', m.userId).executeTakeFirstOrThrow();
  await setPassword(server.db, email, PASSWORD);
  return email;
}

async function downMonitor(name: string, workspaceId: string) {
  // Port 9 on loopback refuses: the first check fails and opens an incident.
  const monitorId = ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: 'http://127.0.0.1:9/', timeoutSeconds: 2 }),
  }), 201).id as string;
  const incidentId = await until(`an incident of ${name}`, async () => (await api.get(`/monitors/${monitorId}`)).body.data.openIncidentId as string | null, 30_000);
  ids[name] = { monitorId, incidentId };
}

async function visitAs(email: string, expectedStatuses = [401]): Promise<Page> {
  const w = await open(browser, server.url, { expectedStatuses });
  pages.push(w);
  await signIn(w.page, server.url, email, PASSWORD);
  return w.page;
}

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
  otherWs = ok('createWorkspace', await api.post('/workspaces', { name: 'Team B' }), 201).id;
  await downMonitor('Main site', org.workspaceId);
  await downMonitor('Team B API', otherWs);
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The names of the page's buttons and editable fields that are not read-only. */
async function writeControls(p: Page): Promise<string[]> {
  const buttons = await p.getByRole('button').evaluateAll((els) => els.map((e) => (e.getAttribute('aria-label') ?? e.textContent ?? '').trim()));
  const boxes = await p.getByRole('checkbox').count();
  const texts = await p.locator('textarea').count();
  return [...buttons.filter((b) => !READ_ONLY_BUTTONS.has(b)), ...(boxes ? [`${boxes} checkboxes`] : []), ...(texts ? [`${texts} text areas`] : [])];
}

test('a viewer finds no write control on any page', async () => {
  const p = await visitAs(await person('viewer'));
  const { monitorId, incidentId } = ids['Main site']!;
  for (const [path, ready] of [
    ['/', 'Open incidents'], ['/monitors', 'Monitors'], [`/monitors/${monitorId}`, 'Main site'],
    ['/incidents', 'Incidents'], [`/incidents/${incidentId}`, 'Main site is down'], ['/monitors/new', 'Overview'],
    ['/channels', 'Channels'], ['/maintenance', 'Maintenance'], ['/on-call', 'On-call'], ['/hosts', 'Hosts and probes'],
  ] as const) {
    await p.goto(`${server.url}${path}`);
    if (path === '/monitors/new') {
      await p.getByRole('alert').getByText('Your role cannot create monitors.').waitFor();
    } else {
      await p.getByRole('heading', { name: ready }).first().waitFor();
      await until(`${path} loaded`, async () => (await p.getByText(/^Loading .*…$/).count()) === 0);
    }
    expect({ path, controls: await writeControls(p) }).toEqual({ path, controls: [] });
    expect(await p.getByRole('link', { name: /New monitor|Create/ }).count()).toBe(0);
    expect(await axe(p, `viewer ${path}`)).toEqual([]);
  }
}, 120_000);

test('a member confined to one workspace sees only its monitors and incidents, and may act on them', async () => {
  // The 404 is the API refusing an incident outside the member's workspace, on purpose.
  const p = await visitAs(await person('member', [otherWs]), [401, 404]);
  await p.getByRole('heading', { name: 'Team B', exact: true }).waitFor();
  await p.getByRole('link', { name: 'Team B API', exact: true }).first().waitFor();
  expect(await p.getByText('Main site').count()).toBe(0);
  expect(await p.getByRole('heading', { name: 'Default' }).count()).toBe(0);

  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Monitors' }).click();
  const table = p.getByRole('table', { name: 'Monitors' });
  await table.getByRole('link', { name: 'Team B API' }).waitFor();
  expect(await table.getByRole('link').count()).toBe(1);
  const workspaces = await p.getByLabel('Workspace').locator('option').allTextContents();
  expect(workspaces).toEqual(['Any', 'Team B']);

  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Incidents' }).click();
  await p.getByRole('link', { name: 'Team B API is down' }).waitFor();
  expect(await p.getByRole('link', { name: 'Main site is down' }).count()).toBe(0);
  // An incident of another workspace is not found, as the API says.
  await p.goto(`${server.url}/incidents/${ids['Main site']!.incidentId}`);
  await p.getByText('This was not found.').waitFor();
  // Its own incident it may acknowledge.
  await p.goto(`${server.url}/incidents/${ids['Team B API']!.incidentId}`);
  await p.getByRole('button', { name: 'Acknowledge' }).waitFor();
  expect(await axe(p, 'confined incident')).toEqual([]);
}, 120_000);

test('a person in two organisations switches between them; the page shows the other organisation\'s monitors', async () => {
  const email = await person('member');
  const other = await server.org({ plan: 'enterprise', name: 'Second org' });
  await addMember(server.db, { organizationId: other.organizationId, email, role: 'viewer' });
  ok('createMonitor', await server.api(other.apiKey).post('/monitors', {
    name: 'Second org site', kind: 'http', workspaceId: other.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: 'http://127.0.0.1:9/' }),
  }), 201);
  const p = await visitAs(email);
  await p.getByRole('link', { name: 'Main site', exact: true }).first().waitFor();
  const switcher = p.getByRole('combobox', { name: 'Organisation' });
  expect(await switcher.locator('option').allTextContents()).toEqual(expect.arrayContaining(['Second org']));
  await switcher.selectOption({ label: 'Second org' });
  await p.getByRole('link', { name: 'Second org site', exact: true }).waitFor();
  expect(await p.getByText('Main site').count()).toBe(0);
  // A viewer there: the write controls went with the switch.
  expect(await writeControls(p)).toEqual([]);
  expect(await axe(p, 'switched')).toEqual([]);
}, 120_000);
