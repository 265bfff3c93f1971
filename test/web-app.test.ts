import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { checkNow } from './support/monitors';
import { startSmtpServer, type SmtpReceiver } from './support/receivers';
import { axe, ensureWebBuilt, launch, open, shot, signIn, type Watched, closeWatched } from './support/web';

// The web app as an SRE uses it, in headless Chromium against a real server:
// a forgotten password reset through the app, sign-in and sign-out, an HTTP
// monitor created through the form (the server's field error shown at the
// field), an incident acknowledged, commented, resolved and given a
// postmortem whose HTML stays text; live updates from the stream; axe-core on
// every page; no console error and no request to another origin.

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let ownerEmail: string;
let password = 'first owner password 1';
let smtp: SmtpReceiver;
let target: http.Server;
let targetUrl: string;
let browser: Browser;
const failing = new Set<string>();
const pages: Watched[] = [];

async function page(opts: Parameters<typeof open>[2] = {}): Promise<Watched> {
  const w = await open(browser, server.url, { expectedStatuses: [401], ...opts });
  pages.push(w);
  return w;
}

async function failingMonitor(name: string): Promise<{ monitorId: string; incidentId: string }> {
  const monitorId = ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 5 }),
  }), 201).id as string;
  failing.add(name);
  const m = await checkNow(server, api, monitorId);
  expect(m.status).toBe('down');
  return { monitorId, incidentId: m.openIncidentId };
}

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  smtp = await startSmtpServer();
  target = http.createServer((req, res) => {
    res.statusCode = [...failing].some((f) => req.url === `/${f}`) ? 503 : 200;
    res.end('x');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', SMTP_URL: smtp.url, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
  ownerEmail = (await server.db.selectFrom('users').innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select('users.email').where('memberships.organization_id', '=', org.organizationId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, ownerEmail, password);
}, 180_000);

afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await smtp?.close();
  await new Promise((r) => target?.close(r));
});

const nav = (p: Page, name: string) => p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

async function checkAxe(p: Page, label: string) {
  expect(await axe(p, label)).toEqual([]);
}

test('a forgotten password set again through the app, sign-in, the overview\'s empty state, sign-out', async () => {
  const { page: p } = await page();
  await p.goto(`${server.url}/`);
  await p.getByRole('heading', { name: 'Sign in to Vigil' }).waitFor();
  expect(new URL(p.url()).pathname).toBe('/sign-in');
  await checkAxe(p, 'sign-in');
  await shot(p, 'sign-in');

  await p.getByRole('link', { name: 'Forgot your password?' }).click();
  await p.getByLabel('E-mail address').fill(ownerEmail);
  await p.getByRole('button', { name: 'Send the link' }).click();
  await p.getByText('a link to set a new password is on its way').waitFor();
  await checkAxe(p, 'forgot-password');
  const [mail] = await smtp.waitFor(1, 20_000);
  const token = /\/password-reset\/(pr_[A-Za-z0-9_-]+)/.exec(mail!.text)![1];

  password = 'a new owner password 2';
  await p.goto(`${server.url}/reset-password#token=${token}`);
  await checkAxe(p, 'reset-password');
  await p.getByLabel('New password').fill(password);
  await p.getByRole('button', { name: 'Set the password' }).click();
  // Lands signed in: the reset answered with a session.
  await p.getByRole('heading', { name: 'Overview' }).waitFor();
  expect(new URL(p.url()).pathname).toBe('/');
  await p.getByRole('heading', { name: 'No monitors yet' }).waitFor();
  await p.getByRole('heading', { name: 'Get started' }).waitFor();
  await checkAxe(p, 'overview-empty');
  await shot(p, 'overview-empty');

  // Dismissed, the checklist is gone for the organisation (also on the next visit).
  await p.getByRole('button', { name: 'Dismiss the checklist' }).click();
  await p.getByRole('heading', { name: 'Get started' }).waitFor({ state: 'detached' });
  expect(ok('getSetup', await api.get('/setup')).dismissedAt).toEqual(expect.any(String));

  await p.getByRole('button', { name: 'Sign out' }).click();
  await p.getByRole('heading', { name: 'Sign in to Vigil' }).waitFor();
  await p.goto(`${server.url}/monitors`);
  await p.getByRole('heading', { name: 'Sign in to Vigil' }).waitFor();
  expect(new URL(p.url()).searchParams.get('next')).toBe('/monitors');
}, 90_000);

test('an HTTP monitor created through the form: the server\'s refusal at the field, then the monitor checked', async () => {
  // The 400 is the server refusing the URL, on purpose.
  const { page: p } = await page({ expectedStatuses: [401, 400] });
  await signIn(p, server.url, ownerEmail, password);
  await nav(p, 'Monitors').click();
  await p.getByRole('link', { name: 'New monitor' }).click();
  await p.getByLabel('Name').fill('Shop');
  await p.getByLabel('URL').fill('ftp://shop.invalid/');
  await p.getByLabel('Check every (seconds)').fill('3600');
  await p.getByRole('button', { name: 'Create the monitor' }).click();
  const url = p.getByLabel('URL');
  await until('the field error', async () => (await url.getAttribute('aria-invalid')) === 'true');
  expect(await p.getByText('Some fields need another look.').isVisible()).toBe(true);
  await checkAxe(p, 'monitor-form-error');

  await url.fill(`${targetUrl}/shop`);
  await p.getByRole('button', { name: 'Create the monitor' }).click();
  await p.getByRole('heading', { name: 'Shop' }).waitFor();
  const id = new URL(p.url()).pathname.split('/').pop()!;
  expect(id).toMatch(/^mon_/);
  await checkNow(server, api, id);
  // Read again by opening the page anew (the live path is the next test's).
  await p.reload();
  await p.getByRole('region', { name: 'Status' }).getByText('Up', { exact: true }).waitFor();
  await checkAxe(p, 'monitor-detail');
  await nav(p, 'Monitors').click();
  await p.getByRole('table', { name: 'Monitors' }).getByRole('link', { name: 'Shop' }).waitFor();
  await checkAxe(p, 'monitor-list');
}, 90_000);

test('live: a monitor turns down and its incident opens on screen without a reload', async () => {
  const name = 'Live';
  const monitorId = ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 5 }),
  }), 201).id as string;
  await checkNow(server, api, monitorId);
  const { page: p } = await page();
  await signIn(p, server.url, ownerEmail, password);
  const row = p.getByRole('listitem').filter({ has: p.getByRole('link', { name, exact: true }) });
  await row.getByText('Up', { exact: true }).waitFor();
  let navigations = 0;
  p.on('framenavigated', (f) => { if (f === p.mainFrame()) navigations++; });
  failing.add(name);
  await checkNow(server, api, monitorId);
  await row.getByText('Down', { exact: true }).waitFor({ timeout: 15_000 });
  await p.getByRole('region', { name: 'Open incidents' }).getByRole('link', { name: `${name} is down` }).waitFor({ timeout: 15_000 });
  expect(navigations).toBe(0);
}, 90_000);

test('an incident from acknowledgement to postmortem; the postmortem\'s HTML stays text', async () => {
  const { incidentId } = await failingMonitor('Checkout');
  const { page: p } = await page();
  await signIn(p, server.url, ownerEmail, password);
  await nav(p, 'Incidents').click();
  await p.getByRole('link', { name: 'Checkout is down' }).click();
  await p.getByRole('heading', { name: 'Checkout is down' }).waitFor();
  expect(new URL(p.url()).pathname).toBe(`/incidents/${incidentId}`);
  await checkAxe(p, 'incident-open');

  await p.getByRole('button', { name: 'Acknowledge' }).click();
  await p.getByRole('region', { name: 'State' }).getByText('Acknowledged', { exact: true }).waitFor();
  await p.getByRole('textbox', { name: 'Comment' }).fill('Rolling back the deploy of 14:02.');
  await p.getByRole('button', { name: 'Add the comment' }).click();
  await p.getByRole('list').getByText('Rolling back the deploy of 14:02.').waitFor();
  // A comment published to status pages and feeds.
  await p.getByRole('textbox', { name: 'Comment' }).fill('We are rolling back; next update in 15 minutes.');
  await p.getByRole('checkbox', { name: 'Publish on status pages and feeds' }).check();
  await p.getByRole('button', { name: 'Add the comment' }).click();
  await p.getByRole('listitem').filter({ hasText: 'We are rolling back' }).getByText('published').waitFor();
  await p.getByRole('button', { name: 'Resolve' }).click();
  await p.getByRole('region', { name: 'State' }).getByText('Resolved', { exact: true }).waitFor();

  await p.getByRole('button', { name: 'Write the postmortem' }).click();
  const body = '## What happened\n\nA **bad deploy**. <img src=x onerror="document.title=\'owned\'"> <script>document.title="owned"</script>\n\n[docs](javascript:alert(1))';
  await p.getByLabel('Postmortem (Markdown)').fill(body);
  await p.getByRole('button', { name: 'Preview' }).click();
  const preview = p.getByRole('region', { name: 'Postmortem preview' });
  await preview.getByRole('heading', { name: 'What happened' }).waitFor();
  expect(await preview.locator('img, script').count()).toBe(0);
  expect(await preview.textContent()).toContain('<img src=x');
  expect(await preview.getByRole('link').count()).toBe(0);
  await p.getByRole('button', { name: 'Save the postmortem' }).click();
  await p.getByRole('button', { name: 'Edit the postmortem' }).waitFor();
  const saved = p.getByRole('region', { name: 'Postmortem', exact: true });
  await saved.getByText('bad deploy').waitFor();
  expect(await p.title()).toBe('Vigil');
  const stored = ok('getIncident', await api.get(`/incidents/${incidentId}`));
  expect(stored.postmortem.body).toBe(body);
  expect(stored.status).toBe('resolved');
  await checkAxe(p, 'incident-resolved');

  const events = ok('listIncidentEvents', await api.get(`/incidents/${incidentId}/events`)) as Array<{ kind: string; message: string | null; public: boolean }>;
  expect(events.map((e) => e.kind)).toEqual(expect.arrayContaining(['opened', 'acknowledged', 'comment', 'resolved']));
  expect(events.filter((e) => e.kind === 'comment').map((e) => [e.message, e.public])).toEqual([
    ['Rolling back the deploy of 14:02.', false], ['We are rolling back; next update in 15 minutes.', true],
  ]);
}, 90_000);

test('every page in light, dark and at 375 px: screenshots, axe-core, no horizontal scroll', async () => {
  const { incidentId, monitorId } = await failingMonitor('Payments');
  const views: Array<[string, string]> = [
    ['overview', '/'], ['monitors', '/monitors'], ['monitor', `/monitors/${monitorId}`], ['monitor-new', '/monitors/new'],
    ['incidents', '/incidents'], ['incident', `/incidents/${incidentId}`],
  ];
  for (const [scheme, width, suffix] of [['light', 1280, 'light'], ['dark', 1280, 'dark'], ['light', 375, 'phone']] as const) {
    const { page: p } = await page({ colorScheme: scheme, width });
    await signIn(p, server.url, ownerEmail, password);
    for (const [name, path] of views) {
      await p.goto(`${server.url}${path}`);
      await p.getByRole('heading', { level: 1 }).first().waitFor();
      // Settled when nothing says "Loading …" any more (an open stream never lets the network go idle).
      await until(`${name} loaded`, async () => (await p.getByText(/^Loading .*…$/).count()) === 0);
      await checkAxe(p, `${name}-${suffix}`);
      if (width === 375) {
        // What sticks out to the right, named, so a failure says where.
        const wide = await p.evaluate(() => [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
          .slice(0, 3).map((e) => `${e.tagName.toLowerCase()}.${e.className}`));
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect({ name, wide, overflow }).toEqual({ name, wide: [], overflow: 0 });
      }
      await shot(p, `${name}-${suffix}`);
    }
  }
}, 180_000);

test('keyboard only: sign in, reach an incident\'s Acknowledge by Tab and press it; focus is always visible', async () => {
  const { incidentId } = await failingMonitor('Search');
  const { page: p } = await page();
  await p.goto(`${server.url}/sign-in`);
  await p.getByRole('heading', { name: 'Sign in to Vigil' }).waitFor();
  const focused = () => p.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    const style = el ? getComputedStyle(el) : null;
    return { name: (el?.getAttribute('aria-label') ?? el?.textContent ?? el?.getAttribute('name') ?? '').trim(), tag: el?.tagName ?? '', outline: style?.outlineStyle ?? 'none' };
  });
  // The e-mail field has the focus on arrival.
  expect((await focused()).tag).toBe('INPUT');
  await p.keyboard.type(ownerEmail);
  await p.keyboard.press('Tab');
  await p.keyboard.type(password);
  await p.keyboard.press('Enter');
  await p.getByRole('heading', { name: 'Overview' }).waitFor();

  await p.goto(`${server.url}/incidents/${incidentId}`);
  await p.getByRole('heading', { name: 'Search is down' }).waitFor();
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await p.keyboard.press('Tab');
    const f = await focused();
    expect({ f: f.name, outline: f.outline === 'none' ? 'none' : 'visible' }).toEqual({ f: f.name, outline: 'visible' });
    reached = f.tag === 'BUTTON' && f.name === 'Acknowledge';
  }
  expect(reached).toBe(true);
  await p.keyboard.press('Enter');
  await p.getByRole('region', { name: 'State' }).getByText('Acknowledged', { exact: true }).waitFor();
}, 90_000);

test('the monitor list: search and filters, bulk pause and resume; a heartbeat\'s ping URL copied', async () => {
  const hb = ok('createMonitor', await api.post('/monitors', { name: 'Nightly backup', kind: 'heartbeat', workspaceId: org.workspaceId, config: '{}', tags: ['cron'] }), 201).id as string;
  const { page: p } = await page();
  await signIn(p, server.url, ownerEmail, password);
  await nav(p, 'Monitors').click();
  const table = p.getByRole('table', { name: 'Monitors' });
  await table.getByRole('link', { name: 'Nightly backup' }).waitFor();
  await p.getByLabel('Tag').selectOption('cron');
  await p.getByText(/^1 of \d+ monitors$/).waitFor();
  expect(new URL(p.url()).searchParams.get('tag')).toBe('cron');
  await p.getByLabel('Tag').selectOption('');
  await p.getByLabel('Search by name').fill('nightly');
  await p.getByText(/^1 of \d+ monitors$/).waitFor();
  await p.getByLabel('Search by name').fill('');

  await table.getByRole('checkbox', { name: 'Select Nightly backup' }).check();
  await p.getByRole('button', { name: 'Pause selected (1)' }).click();
  await p.getByText('Paused 1 monitor.').waitFor();
  await until('paused', async () => (await api.get(`/monitors/${hb}`)).body.data.paused === true);
  await table.getByRole('row').filter({ hasText: 'Nightly backup' }).getByText('Paused', { exact: true }).waitFor();
  await table.getByRole('checkbox', { name: 'Select Nightly backup' }).check();
  await p.getByRole('button', { name: 'Resume selected' }).click();
  await p.getByText('Resumed 1 monitor.').waitFor();
  await until('resumed', async () => (await api.get(`/monitors/${hb}`)).body.data.paused === false);
  await checkAxe(p, 'monitor-list-filtered');

  await table.getByRole('link', { name: 'Nightly backup' }).click();
  const field = p.getByRole('textbox', { name: 'Ping URL' });
  const url = ok('getMonitorPushUrl', await api.get(`/monitors/${hb}/push-url`)).url as string;
  await until('the ping URL', async () => (await field.inputValue()) === url);
  await p.getByRole('button', { name: 'Copy the ping URL' }).click();
  await p.getByText('Copied.').waitFor();
  expect(await p.evaluate(() => navigator.clipboard.readText())).toBe(url);
  await checkAxe(p, 'heartbeat');
}, 90_000);
