/**
 * The API reference at /docs, in a real headless Chromium: Redoc renders the
 * served /openapi.json (operation summaries and descriptions of the contract
 * appear), every request stays on Vigil's own origin (the renderer comes from
 * the installed package, no CDN, no web font), and there is no console error
 * and no Content-Security-Policy violation.
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startTestServer, type TestServer } from './support/harness';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('the reference renders the contract, from this origin only, without an error', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => { (window as any).__violations = [...((window as any).__violations ?? []), `${e.violatedDirective} ${e.blockedURI}`]; });
  });

  const res = await page.goto(`${server.url}/docs`);
  expect(res!.status()).toBe(200);
  const csp = res!.headers()['content-security-policy'];
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("default-src 'none'");

  // Summaries of the contract's operations, as Redoc lists them.
  await page.locator('h2', { hasText: 'Create a monitor' }).first().waitFor({ timeout: 20_000 });
  if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT });
  const text = await page.locator('#redoc').innerText();
  for (const summary of ['List monitors', 'Change a monitor', 'Delete a monitor', 'The route index', 'List incidents']) expect(text).toContain(summary);
  // A description rendered from Markdown.
  expect(text).toContain('clamped up to the plan');

  const origin = new URL(server.url).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
  expect(foreign).toEqual([]);
  expect(requests).toContain(`${origin}/openapi.json`);
  expect(await page.evaluate(() => (window as any).__violations ?? [])).toEqual([]);
  expect(problems).toEqual([]);
  await context.close();
}, 60_000);

test('the page, its bundle and the index link to each other', async () => {
  const page = await fetch(`${server.url}/docs`);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await page.text();
  expect(html).toContain('src="docs/assets/redoc.standalone.js"');
  expect(html).toContain('data-spec="openapi.json"');
  const bundle = await fetch(`${server.url}/docs/assets/redoc.standalone.js`);
  expect(bundle.status).toBe(200);
  expect(bundle.headers.get('content-type')).toMatch(/javascript/);
  const served = Buffer.from(await bundle.arrayBuffer()).toString('utf8');
  expect(served).toContain('Redoc');
  expect(served).not.toContain('cdn.redoc.ly');
  expect((await fetch(`${server.url}/docs/assets/nothing.js`)).status).toBe(404);
  const slash = await fetch(`${server.url}/docs/`, { redirect: 'manual' });
  expect(slash.status).toBe(308);
  expect(new URL(slash.headers.get('location')!, `${server.url}/docs/`).href).toBe(`${server.url}/docs`);
  const org = await server.org();
  const index = await server.api(org.apiKey).get('/');
  expect(index.body.data.docs).toBe(`${server.url}/docs`);
});
