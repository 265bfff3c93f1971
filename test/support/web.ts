import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestServer, type ApiClient, type TestServer } from './harness';

/**
 * The web app in headless Chromium (Debian's, never a download): the app is
 * built first when its sources are newer than dist/web; each page records
 * console errors, uncaught exceptions, CSP violations and every request that
 * leaves the server's origin; axe-core checks each page.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = path.resolve(__dirname, '../..');
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');

/** Builds dist/web when older than its sources (the tests' server runs from src/: dist/ is not needed). */
export function ensureWebBuilt(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/run/build.mjs'), '--web-if-stale'], { cwd: ROOT, stdio: 'inherit' });
}

export async function launch(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });
}

/** What went wrong in a page: console errors, exceptions, CSP violations, requests to other origins. */
export interface Watched { page: Page; context: BrowserContext; problems: string[]; foreign: string[] }

/**
 * A fresh context (its own cookies) on `origin`. `expectedStatuses` are HTTP
 * answers the scenario provokes on purpose (a 401 before sign-in, a 429):
 * Chromium logs each failed response as a console error, which is then not a
 * problem of the app.
 */
export async function open(browser: Browser, origin: string, opts: { expectedStatuses?: number[]; colorScheme?: 'light' | 'dark'; width?: number } = {}): Promise<Watched> {
  const context = await browser.newContext({
    colorScheme: opts.colorScheme ?? 'light',
    viewport: { width: opts.width ?? 1280, height: 900 },
    timezoneId: 'Europe/Paris',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  const problems: string[] = [];
  const foreign: string[] = [];
  const expected = new RegExp(`status of (${(opts.expectedStatuses ?? []).join('|') || 'none'}) `);
  page.on('console', (m) => {
    if (m.type() !== 'error' && m.type() !== 'warning') return;
    const text = m.text();
    if (/^Failed to load resource: the server responded with a status of/.test(text) && expected.test(text)) return;
    problems.push(`${m.type()}: ${text}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => { if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) foreign.push(r.url()); });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
  });
  return { page, context, problems, foreign };
}

/** Closes the pages a test opened (emptying `pages`) and checks that none saw a console error or asked another origin. */
export async function closeWatched(pages: Watched[]): Promise<void> {
  const these = pages.splice(0);
  for (const w of these) await w.context.close().catch(() => undefined);
  for (const w of these) expect({ problems: w.problems, foreign: w.foreign }).toEqual({ problems: [], foreign: [] });
}

/** axe-core on the page as it is: the serious and critical violations (none expected). */
export async function axe(page: Page, label: string): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (an injected <script> it would refuse).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${AXE}\n;0`);
  const violations = await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')).join(', ')}`);
  }) as string[];
  return violations.map((v) => `${label}: ${v}`);
}

/** Saves a screenshot of the page into docs/screenshots. */
export async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Signs in through the app's own form. */
export async function signIn(page: Page, origin: string, email: string, password: string): Promise<void> {
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** Whether the server has the live stream (`GET /api/v1/stream`): a 404 means this build does not. */
export async function hasStream(origin: string, token: string): Promise<boolean> {
  const ac = new AbortController();
  const res = await fetch(`${origin}/api/v1/stream`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: ac.signal });
  ac.abort();
  return res.status !== 404 && res.status !== 501;
}

/**
 * What a web test file starts with: the app built, Chromium, and a server
 * (its read and write limits raised, `env` added) with an enterprise
 * organisation and its owner's API client.
 */
export async function startWebTest(env: Record<string, string> = {}): Promise<{
  browser: Browser; server: TestServer; api: ApiClient; org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
}> {
  ensureWebBuilt();
  const browser = await launch();
  const server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', ...env });
  const org = await server.org({ plan: 'enterprise' });
  return { browser, server, org, api: server.api(org.apiKey) };
}
