import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { checkNow } from './support/monitors';
import { startSmtpServer, type SmtpReceiver } from './support/receivers';

// The status page as its visitors see it, in a real headless Chromium:
// components with their states and uptime bars, no console error and no
// Content-Security-Policy violation (the style hash holds, custom CSS
// applies, nothing injected runs), the password form, the subscription's
// confirmation step, and an incident's published update shown while its
// postmortem never is.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const POSTMORTEM = 'Root cause: a full disk on the primary (postmortem only)';

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let smtp: SmtpReceiver;
let target: http.Server;
let targetUrl: string;
let browser: Browser;
const failing = new Set<string>();

async function monitor(name: string) {
  const id = ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600,
    config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 5 }),
  }), 201).id as string;
  await checkNow(server, api, id);
  return id;
}

async function statusPage(name: string, settings: Record<string, unknown>, components: [string, string][]) {
  const p = ok('createStatusPage', await api.post('/status-pages', { name, workspaceId: org.workspaceId }), 201);
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, settings));
  for (const [monitorId, displayName] of components) ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId, displayName }), 201);
  return p as { id: string; slug: string };
}

/** A fresh browser page that records every console error, uncaught exception and CSP violation. */
async function visit(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  // Chromium reports CSP violations as console errors and as this DOM event; record both.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => { (window as any).__violations = [...((window as any).__violations ?? []), `${e.violatedDirective} ${e.blockedURI}`]; });
  });
  return { page, problems };
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });
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
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await smtp?.close();
  await new Promise((r) => target.close(r));
});

test('components with their states and uptime bars; the CSP holds, custom CSS applies, nothing injected runs', async () => {
  const web = await monitor('web');
  const db = await monitor('db');
  const p = await statusPage('Acme status', {
    historyDays: 30, showResponseTimes: true, themeAccent: '#aa3300',
    customCss: '.banner { letter-spacing: 3px } </style><script>window.pwned = 1</script><style>',
    description: 'Acme <script>window.pwned = 2</script> status',
  }, [[web, 'Website'], [db, 'Database']]);
  failing.add('db');
  await checkNow(server, api, db);

  const { page, problems } = await visit();
  const res = await page.goto(`${server.url}/status/${p.slug}`);
  expect(res!.status()).toBe(200);
  expect(await page.title()).toContain('Acme status');
  expect(await page.locator('.banner').innerText()).toMatch(/outage/i);
  const rows = page.locator('.component');
  expect(await rows.count()).toBe(2);
  expect(await rows.nth(0).locator('.name').innerText()).toBe('Website');
  expect(await rows.nth(0).locator('.state').innerText()).toBe('Operational');
  expect(await rows.nth(1).locator('.name').innerText()).toBe('Database');
  expect(await rows.nth(1).locator('.state').innerText()).toMatch(/outage/i);
  // One cell per day of history, today's painted from the daily roll-up.
  expect(await rows.nth(0).locator('svg.bars rect').count()).toBe(30);
  expect(await rows.nth(0).locator('svg.bars rect').last().getAttribute('class')).toBe('u0');
  const cellBox = await rows.nth(0).locator('svg.bars').boundingBox();
  expect(cellBox!.width).toBeGreaterThan(100);
  expect(await rows.nth(0).locator('svg.rt polyline').count()).toBe(1);

  // The stylesheet ran under its hash: the accent colour, the layout and the custom rule all apply.
  const styles = await page.evaluate(() => {
    const banner = getComputedStyle(document.querySelector('.banner')!);
    return { spacing: banner.letterSpacing, display: getComputedStyle(document.querySelector('.component .row')!).display };
  });
  expect(styles.spacing).toBe('3px');
  expect(styles.display).toBe('flex');
  expect(await page.evaluate(() => (window as any).pwned)).toBeUndefined();
  expect(await page.locator('script').count()).toBe(0);
  expect(await page.locator('.description').innerText()).toContain('<script>');
  expect(await page.evaluate(() => (window as any).__violations ?? [])).toEqual([]);
  expect(problems).toEqual([]);
  await page.context().close();
});

test('a password-protected page: the form, a wrong password said, the right one opens the page and keeps it open', async () => {
  const web = await monitor('private-web');
  const p = await statusPage('Internal status', { visibility: 'password', password: 'correct horse battery' }, [[web, 'Intranet']]);
  const { page, problems } = await visit();
  await page.goto(`${server.url}/status/${p.slug}`);
  expect(await page.locator('.component').count()).toBe(0);
  await page.fill('input[name=password]', 'wrong guess');
  await page.click('button[type=submit]');
  expect(await page.locator('[role=alert]').innerText()).toContain('That password is not right.');
  // The refusal is a 403, which Chromium logs as a failed load; nothing else may be logged.
  expect(problems).toEqual([expect.stringMatching(/status of 403/)]);
  problems.length = 0;
  expect(await page.locator('link[rel=icon]').getAttribute('href')).toContain('%239ca3af'); // no state shown before the password
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForSelector('.component');
  expect(await page.locator('.component .name').innerText()).toBe('Intranet');
  const [cookie] = await page.context().cookies();
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
  await page.reload();
  expect(await page.locator('.component .name').innerText()).toBe('Intranet');
  // The twins behind the same cookie: summary.json opens in the same browser.
  const summary = await page.goto(`${server.url}/status/${p.slug}/api/v2/summary.json`);
  expect(summary!.status()).toBe(200);
  expect(problems).toEqual([]);
  await page.context().close();
});

test('subscribing shows the confirmation step and sends only the confirmation', async () => {
  const web = await monitor('subscribe-web');
  const p = await statusPage('Subscribe here', { subscribersEnabled: true }, [[web, 'App']]);
  const { page, problems } = await visit();
  await page.goto(`${server.url}/status/${p.slug}`);
  await page.fill('#subscribe-email', 'carol@example.test');
  await page.click('#subscribe button[type=submit]');
  await page.waitForSelector('[role=status]');
  const notice = await page.locator('.notice[role=status]').innerText();
  expect(notice).toContain('confirmation link');
  expect(notice).toContain('carol@example.test');
  const [mail] = await smtp.waitFor(1);
  expect(mail.to).toEqual(['carol@example.test']);
  const link = mail.text.split(/\s+/).find((w) => w.includes('/subscribers/confirm/'))!;
  await page.goto(link);
  expect(await page.locator('[role=status]').innerText()).toContain('Subscribe here');
  expect(problems).toEqual([]);
  await page.context().close();
});

test('an incident shows its published update; the postmortem never appears', async () => {
  const api1 = await monitor('checkout');
  const p = await statusPage('Shop status', { showIncidentHistory: true }, [[api1, 'Checkout']]);
  failing.add('checkout');
  const down = await checkNow(server, api, api1);
  const incidentId = down.openIncidentId as string;
  ok('updateIncident', await api.patch(`/incidents/${incidentId}`, { comment: 'Payments are failing over to the backup provider.', publish: true }));
  ok('updateIncident', await api.patch(`/incidents/${incidentId}`, { comment: 'Internal: ask Dave about the disk' }));

  const { page, problems } = await visit();
  await page.goto(`${server.url}/status/${p.slug}`);
  const active = page.locator('.incidents.active .incident');
  expect(await active.count()).toBe(1);
  expect(await active.innerText()).toContain('Payments are failing over to the backup provider.');
  expect(await active.innerText()).not.toContain('Dave');

  failing.delete('checkout');
  await checkNow(server, api, api1);
  ok('setIncidentPostmortem', await api.put(`/incidents/${incidentId}/postmortem`, { body: POSTMORTEM }));
  await page.reload();
  expect(await page.locator('.incidents.active').count()).toBe(0);
  const past = page.locator('.incidents.past .incident');
  expect(await past.count()).toBe(1);
  expect(await past.innerText()).toContain('Payments are failing over to the backup provider.');
  expect(await page.content()).not.toContain('full disk');
  expect(await page.content()).not.toContain(targetUrl);
  expect(problems).toEqual([]);
  await page.context().close();
});
