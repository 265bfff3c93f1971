import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { execTracked, tempDir, type ExecFailure } from './child';
import { ok, until } from './expect';
import { startTestServer, type ApiClient, type TestServer } from './harness';

// The real Sentry upload tools against a test server, and a shop page (the
// errors-browser fixture: @sentry/browser bundled with a two-file app) in
// headless Chromium whose handled error is then read back de-minified.

const ROOT = path.join(__dirname, '..', '..');
/** sentry-cli 3 (the package's own binary) and 2 (the one @sentry/esbuild-plugin 5 runs). */
export const SENTRY_CLI = {
  3: path.join(ROOT, 'node_modules/@sentry/cli/bin/sentry-cli'),
  2: path.join(ROOT, 'node_modules/@sentry/esbuild-plugin/node_modules/@sentry/cli/bin/sentry-cli'),
};
export const SHOP_SOURCE = path.join(__dirname, '..', 'fixtures', 'errors-browser', 'src');
const CART = fs.readFileSync(path.join(SHOP_SOURCE, 'cart.js'), 'utf8');
/** The original line (1-based) of the `throw`. */
export const THROW_LINE = CART.split('\n').findIndex((l) => l.includes('throw new Error(')) + 1;

/**
 * The tools' environment: nothing of the machine's Sentry configuration
 * (a fresh HOME, no .env), no update check, no telemetry: they talk to the
 * test server only.
 */
export function toolEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH, HOME: home, SENTRY_LOAD_DOTENV: '0', SENTRY_DISABLE_UPDATE_CHECK: 'true', SENTRY_DISABLE_TELEMETRY: '1',
    SENTRY_NO_PROGRESS_BAR: '1', NODE_PATH: path.join(ROOT, 'node_modules'),
  };
}

/** Runs sentry-cli; answers its exit code and everything it printed (a refusal is a result, not a throw). */
export async function sentryCli(version: 2 | 3, url: string, token: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  try {
    const r = await execTracked(SENTRY_CLI[version], ['--url', url, '--auth-token', token, ...args], { cwd, env: toolEnv(cwd), timeoutMs: 30_000 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const f = e as ExecFailure;
    if (f.stdout === undefined) throw e;
    return { code: f.code, out: f.stdout + f.stderr };
  }
}

/** The tool's output when it succeeded; its output as the failure otherwise. */
export function succeeded(r: { code: number | null; out: string }): string {
  if (r.code !== 0) throw new Error(`the tool exited ${r.code}:\n${r.out}`);
  return r.out;
}

export interface Shop { work: string; webUrl: string; browser: Browser; close(): Promise<void> }

/** A web server for `work/www` (pages and bundles, never maps) on its own origin, and Chromium. */
export async function openShop(): Promise<Shop> {
  const work = tempDir('vigil-upload-');
  const www = path.join(work, 'www');
  fs.mkdirSync(www, { recursive: true });
  const web = http.createServer((req, res) => {
    const file = path.join(www, path.normalize(decodeURIComponent(new URL(req.url!, 'http://x').pathname)));
    if (!file.startsWith(www + path.sep) || file.endsWith('.map') || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.statusCode = 404;
      return res.end();
    }
    res.setHeader('content-type', file.endsWith('.html') ? 'text/html; charset=utf-8' : 'text/javascript; charset=utf-8');
    res.end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });
  return {
    work, webUrl: `http://localhost:${(web.address() as AddressInfo).port}`, browser,
    close: async () => { await browser.close(); await new Promise((r) => web.close(r)); },
  };
}

/** Writes the page of the shop built into `www/<name>/assets/app.min.js`, opens it, reports a handled error and waits until it is sent. */
export async function reportFromShop(shop: Shop, name: string, config: { dsn: string; release: string }): Promise<void> {
  fs.writeFileSync(path.join(shop.work, 'www', name, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Shop</title>
<script>window.SHOP = ${JSON.stringify(config)};</script></head>
<body><button id="checkout">Checkout</button><button id="quick-checkout">Quick checkout</button><output id="total"></output>
<script src="assets/app.min.js"></script></body></html>`);
  const context = await shop.browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${shop.webUrl}/${name}/index.html`);
    await page.getByRole('button', { name: 'Checkout', exact: true }).click();
    await page.waitForFunction(() => document.getElementById('total')!.textContent === 'reported');
    expect(await page.evaluate(() => (window as any).flushReports())).toBe(true);
  } finally {
    await context.close();
  }
}

/** The throw site of the project's one issue, as read through the API (frames resolved when read). */
export async function thrownFrame(api: ApiClient, projectId: string) {
  const [issue] = await until('the issue', async () => {
    const l = ok('listErrorIssues', await api.get(`/errors/issues?project=${projectId}`)) as { id: string }[];
    return l.length ? l : null;
  }, 20_000);
  const detail = ok('getErrorIssue', await api.get(`/errors/issues/${issue.id}`));
  return detail.exceptions.at(-1).frames.at(-1);
}

/** A server that resolves frames (its worker on, limits out of the way), an organisation, and the shop's build folder and browser. */
export interface ShopWorld { server: TestServer; shop: Shop; org: { organizationId: string; workspaceId: string; apiKey: string }; api: ApiClient; close(): Promise<void> }

export async function openShopWorld(): Promise<ShopWorld> {
  const [server, shop] = await Promise.all([startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' }), openShop()]);
  const org = await server.org({ plan: 'business' });
  return { server, shop, org, api: server.api(org.apiKey), close: async () => { await shop.close(); await server.close(); } };
}
