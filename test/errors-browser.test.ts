import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { tempDir } from './support/child';

// The unchanged @sentry/browser SDK, bundled and minified with a small
// two-file app (test/fixtures/errors-browser) by esbuild, runs in headless
// Chromium on a page served from another origin than Vigil's. A handled
// (captureException) and an uncaught error reach Vigil with no CORS error
// and no preflight; their minified frames are resolved, when the issue is
// read, to the original file, the throw's line, its source line and the
// ORIGINAL name of the enclosing function (computeTotal, not the minified
// one) — through a debug ID injected as Sentry's bundler plugins do (map
// uploaded before the errors), and through release + `~/file` (map uploaded
// after the events arrived; and without sourcesContent, named by the map's
// token at the caller's call site).

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = path.join(__dirname, '..');
const FIXTURE = path.join(__dirname, 'fixtures', 'errors-browser', 'src');
const CART = fs.readFileSync(path.join(FIXTURE, 'cart.js'), 'utf8');
/** The original line (1-based) of the `throw`, from the source text. */
const THROW_LINE = CART.split('\n').findIndex((l) => l.includes('throw new Error(')) + 1;
const THROW_TEXT = CART.split('\n')[THROW_LINE - 1];

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let browser: Browser;
let work: string;
let web: http.Server;
let webUrl: string;
/** Built in the set-up: (a) with a debug ID, (b) without. */
let appA: App;
let appB: App;
const DEBUG_ID = randomUUID();

/** Sentry's debug-ID snippet (@sentry/bundler-plugins `getDebugIdSnippet`, in its self-contained esbuild form). */
const debugIdSnippet = (id: string) =>
  `!function(){try{var e="undefined"!=typeof window?window:"undefined"!=typeof global?global:"undefined"!=typeof globalThis?globalThis:"undefined"!=typeof self?self:{};`
  + `var n=(new e.Error).stack;n&&(e._sentryDebugIds=e._sentryDebugIds||{},e._sentryDebugIds[n]="${id}",e._sentryDebugIdIdentifier="sentry-dbid-${id}")}catch(e){}}();\n`;

type App = { name: string; bundleUrl: string; tildeName: string; map: Record<string, unknown> };

/**
 * Bundles the app with the SDK into `www/<name>/assets/app.min.js` (+ .map).
 * With `debugId`, the bundle first runs the debug-ID snippet (as the esbuild
 * plugin's injected module does) and both files are stamped (`//# debugId=`
 * in the JS, `debug_id` and `debugId` in the map).
 */
async function buildApp(name: string, debugId?: string): Promise<App> {
  const js = path.join(work, 'www', name, 'assets', 'app.min.js');
  let entry = path.join(work, 'src', 'main.js');
  if (debugId) {
    fs.writeFileSync(path.join(work, 'src', `sentry-debug-id-${name}.js`), debugIdSnippet(debugId));
    entry = path.join(work, 'src', `entry-${name}.js`);
    fs.writeFileSync(entry, `import './sentry-debug-id-${name}.js';\nimport './main.js';\n`);
  }
  await build({
    entryPoints: [entry], outfile: js, bundle: true, minify: true, sourcemap: true, format: 'iife', target: 'es2022',
    nodePaths: [path.join(ROOT, 'node_modules')], logLevel: 'silent',
  });
  const map = JSON.parse(fs.readFileSync(`${js}.map`, 'utf8'));
  if (debugId) {
    fs.appendFileSync(js, `\n//# debugId=${debugId}\n`);
    map.debug_id = debugId;
    map.debugId = debugId;
    fs.writeFileSync(`${js}.map`, JSON.stringify(map));
  }
  return { name, bundleUrl: `${webUrl}/${name}/assets/app.min.js`, tildeName: `~/${name}/assets/app.min.js`, map };
}

/** The app's page, with the configuration `Sentry.init` reads (the project's DSN and the release); returns its URL. */
function writePage(app: App, config: { dsn: string; release: string }): string {
  fs.writeFileSync(path.join(work, 'www', app.name, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Shop</title>
<script>window.SHOP = ${JSON.stringify(config)};</script></head>
<body><button id="checkout">Checkout</button><button id="quick-checkout">Quick checkout</button><output id="total"></output>
<script src="assets/app.min.js"></script></body></html>`);
  return `${webUrl}/${app.name}/index.html`;
}

async function createProject(name: string) {
  return ok('createErrorProject', await api.post('/errors/projects', { name, workspaceId: org.workspaceId, platform: 'javascript' }), 201) as { id: string; ref: number; publicKey: string; dsn: string };
}

/**
 * Opens the page, clicks both buttons (a handled and an uncaught error),
 * waits for the SDK to send everything and returns what the browser saw:
 * console errors and warnings, uncaught page errors, requests to Vigil
 * (method, headers, status) and, from the DevTools protocol, every request
 * Chromium sent to Vigil, preflights included.
 */
async function runInBrowser(pageUrl: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const console_: string[] = [];
  const pageErrors: string[] = [];
  const toVigil: { method: string; headers: Record<string, string>; status?: number; acao?: string }[] = [];
  const failed: string[] = [];
  const wire: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') console_.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('requestfailed', (r) => failed.push(`${r.method()} ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', async (r) => {
    if (!r.url().startsWith(server.url)) return;
    toVigil.push({ method: r.request().method(), headers: await r.request().allHeaders(), status: r.status(), acao: (await r.allHeaders())['access-control-allow-origin'] });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (e) => { if (e.request.url.startsWith(server.url)) wire.push(`${e.request.method} ${e.type}`); });
  await page.goto(pageUrl);
  await page.click('#checkout');
  await page.waitForFunction(() => document.getElementById('total')!.textContent === 'reported');
  await page.click('#quick-checkout');
  // Everything the SDK queued is sent and every answer recorded.
  expect(await page.evaluate(() => (window as any).flushReports())).toBe(true);
  await until('the answers to the SDK', async () => toVigil.length > 0 && toVigil.length === wire.filter((w) => w.startsWith('POST')).length);
  return { page, console: console_, pageErrors, toVigil, failed, wire, close: () => context.close() };
}

/** The project's issues once both errors were grouped, by how they were reported. */
async function issuesOf(projectId: string) {
  const list = await until('both issues', async () => {
    const l = ok('listErrorIssues', await api.get(`/errors/issues?project=${projectId}`)) as { id: string }[];
    return l.length >= 2 ? l : null;
  });
  expect(list).toHaveLength(2);
  const details = await Promise.all(list.map(async (i) => ok('getErrorIssue', await api.get(`/errors/issues/${i.id}`))));
  const handled = details.find((d) => d.exceptions.at(-1).mechanism === 'generic');
  const uncaught = details.find((d) => d !== handled);
  expect(handled).toBeDefined();
  return { handled, uncaught, ids: [handled.id, uncaught.id] as string[] };
}

/** The throw site (the thrown error's last frame) and the app's own resolved frames, outermost first. */
function framesOf(issue: any) {
  const frames = issue.exceptions.at(-1).frames as any[];
  return { thrown: frames.at(-1), app: frames.filter((f) => f.resolved && /(^|\/)src\/(main|cart)\.js$/.test(f.filename)) };
}

function expectResolvedThrowSite(issue: any, handled: boolean) {
  expect(issue.type).toBe('Error');
  expect(issue.value).toContain('Unsupported currency euro on line B-2');
  const { thrown, app } = framesOf(issue);
  expect(thrown).toMatchObject({ resolved: true, lineno: THROW_LINE, function: 'computeTotal', contextLine: THROW_TEXT });
  expect(thrown.filename).toMatch(/(^|\/)src\/cart\.js$/);
  expect(thrown.contextLine).toContain('throw new Error(');
  expect(thrown.preContext.at(-1)).toBe(CART.split('\n')[THROW_LINE - 2]);
  // The callers by their original names too (at a call site the map's own name token is the callee's).
  expect(app.map((f) => f.function)).toEqual([handled ? 'onCheckoutClicked' : 'onQuickCheckoutClicked', 'renderSummary', 'Checkout.summary', 'computeTotal']);
}

function expectNoCorsTrouble(b: Awaited<ReturnType<typeof runInBrowser>>) {
  expect(b.console).toEqual([]);
  expect(b.failed).toEqual([]);
  // Only the uncaught error escapes to the page.
  expect(b.pageErrors).toEqual([expect.stringContaining('Unsupported currency euro')]);
  // The SDK's envelopes: simple requests (POST, text/plain, no custom header), answered 200 with Relay's CORS header.
  expect(b.toVigil.length).toBeGreaterThanOrEqual(2);
  for (const r of b.toVigil) {
    expect(r).toMatchObject({ method: 'POST', status: 200, acao: '*' });
    expect(r.headers['content-type']).toBe('text/plain;charset=UTF-8');
    expect(Object.keys(r.headers).filter((h) => /^x-sentry|^authorization$/i.test(h))).toEqual([]);
  }
  // And Chromium sent no preflight for them.
  expect(b.wire.filter((w) => w.startsWith('OPTIONS'))).toEqual([]);
  expect(b.wire.filter((w) => w.startsWith('POST')).length).toBe(b.toVigil.length);
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  work = tempDir('vigil-browser-errors-');
  fs.cpSync(FIXTURE, path.join(work, 'src'), { recursive: true });
  // The shop: its own origin (localhost and another port), serving pages and bundles, never the maps.
  web = http.createServer((req, res) => {
    const file = path.join(work, 'www', path.normalize(decodeURIComponent(new URL(req.url!, 'http://x').pathname)));
    if (!file.startsWith(path.join(work, 'www') + path.sep) || file.endsWith('.map') || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', file.endsWith('.html') ? 'text/html; charset=utf-8' : 'text/javascript; charset=utf-8');
    res.end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  webUrl = `http://localhost:${(web.address() as AddressInfo).port}`;
  [browser, server, appA, appB] = await Promise.all([
    chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] }),
    startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' }),
    buildApp('a', DEBUG_ID),
    buildApp('b'),
  ]);
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((r) => (web ? web.close(r) : r(undefined)));
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('debug ID: a map uploaded before the errors resolves the handled and the uncaught error to the original file, line and function', async () => {
  const project = await createProject('shop (debug id)');
  expect(new URL(project.dsn).origin).toBe(server.url);
  const debugId = DEBUG_ID;
  const app = appA;
  const pageUrl = writePage(app, { dsn: project.dsn, release: 'shop@1.0.0+a' });
  expect(webUrl).not.toBe(server.url);
  const up = ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: project.ref, filename: app.tildeName, debugId, map: app.map }), 201);
  expect(up).toMatchObject({ debugId, release: null });
  const b = await runInBrowser(pageUrl);
  try {
    const { handled, uncaught } = await issuesOf(project.id);
    expectNoCorsTrouble(b);
    // The SDK found the injected ID and sent it for the bundle's URL.
    const payloads = await server.db.selectFrom('error_events').select('payload').where('project_id', '=', project.id).execute();
    expect(payloads).toHaveLength(2);
    for (const { payload } of payloads) {
      expect(JSON.parse(payload).debug_meta.images).toEqual([{ type: 'sourcemap', code_file: app.bundleUrl, debug_id: debugId }]);
    }
    expectResolvedThrowSite(handled, true);
    expectResolvedThrowSite(uncaught, false);
    expect(uncaught.exceptions.at(-1).mechanism).not.toBe('generic');
    expect(handled.lastEvent).toMatchObject({ release: 'shop@1.0.0+a', environment: 'test', platform: 'javascript' });

    // Relay's exposed headers are readable cross-origin: a refusal's X-Sentry-Error reaches page scripts.
    const refused = await b.page.evaluate(async (url) => {
      const r = await fetch(url, { method: 'POST', body: '{}\n{"type":"event"}\n{}' });
      return { status: r.status, error: r.headers.get('x-sentry-error') };
    }, `${server.url}/api/${project.ref}/envelope/?sentry_key=${'0'.repeat(32)}&sentry_version=7`);
    expect(refused).toEqual({ status: 403, error: 'invalid DSN key' });
    // A request with the auth header is not simple: Chromium preflights it, Vigil allows it (so the check above is not vacuous).
    const preflighted = await b.page.evaluate(async ([url, key]) => {
      const r = await fetch(url, { method: 'POST', headers: { 'X-Sentry-Auth': `Sentry sentry_version=7, sentry_key=${key}` }, body: '{}\n{"type":"client_report"}\n{"discarded_events":[]}' });
      return r.status;
    }, [`${server.url}/api/${project.ref}/envelope/`, project.publicKey]);
    expect(preflighted).toBe(200);
    expect(b.wire.filter((w) => w.startsWith('OPTIONS'))).toHaveLength(1);
    expect(b.console).toEqual([expect.stringMatching(/status of 403/)]);
  } finally {
    await b.close();
  }
});

test('release + ~/file: a map uploaded after the events arrived resolves them when the issue is read', async () => {
  const project = await createProject('shop (release)');
  const release = 'shop@2.0.0';
  const app = appB;
  const b = await runInBrowser(writePage(app, { dsn: project.dsn, release }));
  try {
    const before = await issuesOf(project.id);
    expectNoCorsTrouble(b);
    // As sent: minified frames in the bundle, under the minified name.
    for (const issue of [before.handled, before.uncaught]) {
      const { thrown } = framesOf(issue);
      expect(thrown).toMatchObject({ resolved: false, filename: app.bundleUrl });
      expect(thrown.function).not.toBe('computeTotal');
    }
    const payloads = await server.db.selectFrom('error_events').select('payload').where('project_id', '=', project.id).execute();
    for (const { payload } of payloads) expect(JSON.parse(payload).debug_meta).toBeUndefined();

    ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: project.ref, filename: app.tildeName, release, map: app.map }), 201);
    const [handled, uncaught] = await Promise.all(before.ids.map(async (id) => ok('getErrorIssue', await api.get(`/errors/issues/${id}`))));
    expectResolvedThrowSite(handled, true);
    expectResolvedThrowSite(uncaught, false);

    // The same map without sourcesContent (uploading again replaces it): no source to scan, so the
    // throw site is named by the map's token at its caller's call site, `computeTotal(this.cart)`.
    const { sourcesContent: _, ...bare } = app.map;
    ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: project.ref, filename: app.tildeName, release, map: bare }), 201);
    const thrown = framesOf(ok('getErrorIssue', await api.get(`/errors/issues/${before.ids[0]}`))).thrown;
    expect(thrown).toMatchObject({ resolved: true, lineno: THROW_LINE, function: 'computeTotal', contextLine: null });
    expect(thrown.filename).toMatch(/(^|\/)src\/cart\.js$/);
  } finally {
    await b.close();
  }
});
