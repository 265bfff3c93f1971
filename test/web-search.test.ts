import type { Browser } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { axe, closeWatched, open, shot, signIn, type Watched, startWebTest } from './support/web';

// The global search: "/" from any page focuses the header's field, Enter opens
// the search page with the hits grouped by type, each opening its page; typing
// on the search page searches again (one read per pause, not per letter); a
// viewer's search has no types it may not read.

const PASSWORD = 'search test password 1';
let server: TestServer;
let api: ApiClient;
let browser: Browser;
let email: string;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
const pages: Watched[] = [];

beforeAll(async () => {
  ({ browser, server, org, api } = await startWebTest());
  email = (await server.db.selectFrom('users').select('email').where('id', '=', org.userId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, email, PASSWORD);
  for (const name of ['Payments API', 'Payments worker', 'Search cluster']) {
    ok('createMonitor', await api.post('/monitors', {
      name, kind: 'tcp', workspaceId: org.workspaceId, intervalSeconds: 3600, tags: ['payments'], config: JSON.stringify({ host: '127.0.0.1', port: 9 }),
    }), 201);
  }
  ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'Payments webhook', target: 'https://hooks.example.com/pay', workspaceId: null }), 201);
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('"/" focuses the search; hits grouped by type open their pages; typing searches again', async () => {
  for (const [scheme, width, suffix] of [['light', 1280, 'light'], ['dark', 1280, 'dark'], ['light', 375, 'phone']] as const) {
    const w = await open(browser, server.url, { expectedStatuses: [401], colorScheme: scheme, width });
    pages.push(w);
    const p = w.page;
    const searches: string[] = [];
    p.on('request', (r) => { if (new URL(r.url()).pathname === '/api/v1/search') searches.push(new URL(r.url()).searchParams.get('q') ?? ''); });
    await signIn(p, server.url, email, PASSWORD);
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    await p.keyboard.press('/');
    const box = p.getByRole('searchbox', { name: 'Search Vigil' });
    expect(await box.evaluate((el) => el === document.activeElement)).toBe(true);
    await box.fill('payments');
    await box.press('Enter');
    await p.getByRole('heading', { name: 'Search', exact: true }).waitFor();
    const monitors = p.getByRole('region', { name: /^Monitors/ });
    await monitors.getByRole('link', { name: 'Payments API' }).waitFor();
    await monitors.getByRole('link', { name: 'Payments worker' }).waitFor();
    // Search cluster matched on its tag: shown with the tag that matched.
    await monitors.getByRole('link', { name: 'Search cluster' }).waitFor();
    await p.getByRole('region', { name: /^Channels/ }).getByRole('link', { name: 'Payments webhook' }).waitFor();
    expect(await axe(p, `search-${suffix}`)).toEqual([]);
    await shot(p, `search-${suffix}`);

    // Typing a word searches once after the pause, and the address keeps the query.
    const field = p.getByLabel(/^Search monitors, incidents/);
    await field.fill('cluster');
    await p.getByRole('region', { name: /^Monitors/ }).getByRole('link', { name: 'Search cluster' }).waitFor();
    await p.getByRole('region', { name: /^Channels/ }).waitFor({ state: 'detached' });
    expect(new URL(p.url()).searchParams.get('q')).toBe('cluster');
    expect(searches).toEqual(['payments', 'cluster']);

    await p.getByRole('link', { name: 'Search cluster' }).click();
    await p.getByRole('heading', { name: 'Search cluster' }).waitFor();
  }
}, 180_000);

test('nothing found says so; a viewer finds no channels hidden from it and no keys', async () => {
  const viewer = await server.member(org.organizationId, 'viewer');
  const vEmail = (await server.db.selectFrom('users').select('email').where('id', '=', viewer.userId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, vEmail, PASSWORD);
  ok('createApiKey', await api.post('/api-keys', { name: 'Payments deploy key', scopes: ['monitor:read'] }), 201);
  const w = await open(browser, server.url, { expectedStatuses: [401] });
  pages.push(w);
  const p = w.page;
  await signIn(p, server.url, vEmail, PASSWORD);
  await p.goto(`${server.url}/search?q=${encodeURIComponent('no such thing anywhere')}`);
  await p.getByText('Nothing matches “no such thing anywhere”.').waitFor();
  await p.goto(`${server.url}/search?q=payments`);
  await p.getByRole('region', { name: /^Monitors/ }).getByRole('link', { name: 'Payments API' }).waitFor();
  // A viewer reads channels but holds no api_key:read: the key is absent, never an error.
  await p.getByRole('region', { name: /^Channels/ }).waitFor();
  expect(await p.getByRole('region', { name: /^API keys/ }).count()).toBe(0);
  expect(await axe(p, 'search-viewer')).toEqual([]);
}, 60_000);
