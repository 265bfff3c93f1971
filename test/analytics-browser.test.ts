import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { analyticsClock } from '../src/analytics/visitor';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { tempDir } from './support/child';

// Web analytics as real pages send it, in headless Chromium: the unchanged
// @plausible-analytics/tracker (bundled by esbuild, pointed at Vigil's
// /api/event) and Vigil's own {base_url}/js/script.js, each on a page served
// from another origin than Vigil's (http://localhost:<port>). Per tracker: a
// pageview with a referrer, an SPA navigation by pushState (and one to the
// same pathname, which is not a pageview), a custom event with props and an
// outbound link click — each counted under the right path, event, props,
// browser, OS, device and referrer, with no CORS error and no preflight.
// Uniques: visitor A on two days (the analytics clock moved back a day for
// the first visit) and visitor B once count three daily uniques.
//
// Chromium under automation says `HeadlessChrome` in its user agent (a bot:
// Vigil drops it, as Plausible does) and sets navigator.webdriver (the
// official tracker then skips events unless window.__plausible is set, its
// own test hook). So the contexts present a desktop Chrome user agent and the
// official tracker's page sets window.__plausible; Vigil's script needs nothing.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = path.join(__dirname, '..');
const ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update'];
const REFERRER = 'http://news.example/item?id=1';

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let browser: Browser;
let work: string;
let web: http.Server;
/** The shop's origin: localhost, another port than Vigil's. */
let webUrl: string;
/** Another host (same server): where the outbound link goes. */
let awayUrl: string;
let chromeUa: string;
/** The HTML served at `/` and `/pricing` for `?page=<key>`. */
const pages = new Map<string, string>();

type Site = { id: string; publicId: string; domain: string; scriptTag?: string };

async function createSite(domain: string): Promise<Site> {
  return ok('createAnalyticsSite', await api.post('/analytics', { domain, workspaceId: org.workspaceId }), 201) as Site;
}

const BODY = `<nav><button id="pricing">Pricing</button><button id="pricing-again">Pro pricing</button><button id="signup">Sign up</button>
<a id="out" href="__AWAY__">Our partner</a></nav>`;

/** A page measured by the official tracker (its bundle reads window.SHOP). */
function officialPage(site: Site): string {
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Shop</title>
<script>window.SHOP = ${JSON.stringify({ domain: site.domain, endpoint: `${server.url}/api/event` })};</script>
<script defer src="/assets/official.js"></script></head><body>${BODY.replace('__AWAY__', awayUrl)}</body></html>`;
}

/**
 * A page measured by Vigil's script: the tag the API gives for the site, the
 * documented queue snippet before it (with one call made before the script
 * loads), and the page's own handlers calling window.vigil.
 */
function vigilPage(site: Site): string {
  const tag = site.scriptTag ?? `<script defer data-site="${site.publicId}" src="${server.url}/js/script.js"></script>`;
  expect(tag).toBe(`<script defer data-site="${site.publicId}" src="${server.url}/js/script.js"></script>`);
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Shop</title>
<script>window.vigil = window.vigil || function () { (window.vigil.q = window.vigil.q || []).push(arguments) };
window.vigil('Newsletter', { props: { source: 'header' } });</script>
${tag}</head><body>${BODY.replace('__AWAY__', awayUrl)}
<script>
document.getElementById('pricing').addEventListener('click', function () { history.pushState({}, '', '/pricing'); });
document.getElementById('pricing-again').addEventListener('click', function () { history.pushState({}, '', '/pricing?plan=pro'); });
document.getElementById('signup').addEventListener('click', function () { window.vigil('Signup', { props: { plan: 'pro' } }); });
</script></body></html>`;
}

/** The official tracker with the page's handlers, as a site would bundle it. */
async function buildOfficial(): Promise<void> {
  const entry = path.join(work, 'official.js');
  fs.writeFileSync(entry, `import { init, track } from '@plausible-analytics/tracker';
// The tracker skips browsers with navigator.webdriver unless this, its own test hook, is set.
window.__plausible = true;
init({ domain: window.SHOP.domain, endpoint: window.SHOP.endpoint, autoCapturePageviews: true, outboundLinks: true, captureOnLocalhost: true });
document.getElementById('pricing').addEventListener('click', () => history.pushState({}, '', '/pricing'));
document.getElementById('pricing-again').addEventListener('click', () => history.pushState({}, '', '/pricing?plan=pro'));
document.getElementById('signup').addEventListener('click', () => track('Signup', { props: { plan: 'pro' } }));
`);
  await build({
    entryPoints: [entry], outfile: path.join(work, 'www', 'assets', 'official.js'), bundle: true, minify: true, format: 'iife', target: 'es2017',
    nodePaths: [path.join(ROOT, 'node_modules')], logLevel: 'silent',
  });
}

/** What a browser context saw of Vigil: answers to /api/event, every request on the wire (preflights too), problems. */
async function openContext(userAgent: string | undefined) {
  const context = await browser.newContext(userAgent ? { userAgent } : {});
  const page = await context.newPage();
  const problems: string[] = [];
  const answers: { name: string; status: number; contentType: string; dropped: string | undefined; acao: string | undefined }[] = [];
  const wire: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', async (r) => {
    if (r.url() !== `${server.url}/api/event`) return;
    const h = await r.allHeaders();
    const name = String(r.request().postDataJSON()?.n);
    answers.push({ name, status: r.status(), contentType: (await r.request().allHeaders())['content-type'], dropped: h['x-plausible-dropped'], acao: h['access-control-allow-origin'] });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (e) => { if (e.request.url.startsWith(`${server.url}/api/event`)) wire.push(e.request.method); });
  /** Resolves once `n` events were answered (and as many were sent). */
  const answered = (n: number) => until(`${n} answers from /api/event`, async () => answers.length >= n && wire.filter((m) => m === 'POST').length === answers.length);
  return { context, page, problems, answers, wire, answered };
}

/**
 * The scenario, the same for both trackers: arrive from a news site on `/`,
 * navigate to `/pricing` by pushState, then to `/pricing?plan=pro` (same
 * pathname: no pageview), sign up (`Signup` {plan: pro}), follow the outbound
 * link (the page navigates away at once; the click is still counted).
 * `queued`: custom events the page calls before its tracker runs.
 */
async function visitShop(key: string, opts: { queued: number }) {
  const b = await openContext(chromeUa);
  try {
    const named = (n: string) => b.answers.filter((a) => a.name === n).length;
    await b.page.goto(`${webUrl}/?page=${key}`, { referer: REFERRER });
    await b.answered(1 + opts.queued);
    await b.page.click('#pricing');
    await until('the SPA pageview answered', async () => named('pageview') === 2);
    await b.page.click('#pricing-again');
    await b.page.click('#signup');
    await until('the signup answered', async () => named('Signup') === 1);
    await b.answered(b.wire.length);
    // The same pathname again was no pageview; the official tracker adds its engagement events (not counted).
    expect(b.answers.map((a) => a.name).filter((n) => n !== 'engagement').sort()).toEqual(['pageview', 'pageview', 'Signup', ...(opts.queued ? ['Newsletter'] : [])].sort());
    expect(b.problems).toEqual([]);
    await b.page.click('#out');
    await b.page.waitForURL(`${awayUrl}`);
    expect(await b.page.textContent('h1')).toBe('Partner');
    // Leaving the page, Chromium reports its keepalive requests as aborted, answered ones included
    // (they outlive the document); that the click's event arrived is shown by the count.
    const left = b.problems.filter((p) => p !== `failed: POST ${server.url}/api/event net::ERR_ABORTED`);
    b.problems.length = 0;
    b.problems.push(...left);
    // Everything sent was a simple request answered 202, with CORS; never a preflight.
    for (const a of b.answers) expect(a).toMatchObject({ status: 202, contentType: expect.stringMatching(/^text\/plain\b/), acao: '*' });
    expect(b.answers.filter((a) => a.dropped !== undefined)).toEqual([]);
    expect(b.wire.filter((m) => m !== 'POST')).toEqual([]);
    expect(b.problems).toEqual([]);
  } finally {
    await b.context.close();
  }
}

type Report = {
  visitors: number; dailyUniqueVisitors: number; pageviews: number; visits?: number;
  series: { date: string; visitors: number; pageviews: number }[];
  breakdowns: { dimension: string; rows: { value: string; visitors: number; pageviews: number; visits?: number | null; props?: { key: string; value: string; events: number; visitors: number }[] }[] }[];
};

async function report(site: Site): Promise<Report> {
  return ok('getAnalyticsSite', await api.get(`/analytics/${site.id}?days=7&dimensions=path,event,browser,os,device,referrer`)) as Report;
}

/** The report once `done` holds (the drain moved the events into the roll-ups). */
async function reportWhen(site: Site, what: string, done: (r: Report) => boolean): Promise<Report> {
  let last: Report | undefined;
  try {
    return await until(what, async () => { last = await report(site); return done(last) ? last : null; }, 20_000);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last report: ${JSON.stringify(last)}`);
  }
}

const rows = (r: Report, dimension: string) => r.breakdowns.find((b) => b.dimension === dimension)!.rows;
const eventRow = (r: Report, name: string) => rows(r, 'event').find((x) => x.value === name);

/** What both trackers' visits must come to (`extraEvents`: custom events besides Signup and the outbound click). */
function expectShopCounted(r: Report, extraEvents: { name: string; props: Record<string, string> }[]) {
  expect(r).toMatchObject({ visitors: 1, dailyUniqueVisitors: 1, pageviews: 2 });
  if (r.visits !== undefined) expect(r.visits).toBe(1);
  expect(r.series.at(-1)).toMatchObject({ visitors: 1, pageviews: 2 });
  expect(r.breakdowns.map((b) => b.dimension)).toEqual(['path', 'event', 'browser', 'os', 'device', 'referrer']);

  expect(rows(r, 'path').map(({ value, visitors, pageviews }) => ({ value, visitors, pageviews })).sort((a, b) => a.value.localeCompare(b.value)))
    .toEqual([{ value: '/', visitors: 1, pageviews: 1 }, { value: '/pricing', visitors: 1, pageviews: 1 }]);

  // Custom events only: never `pageview`, never the tracker's `engagement`.
  const expected = [
    { name: 'Outbound Link: Click', props: { url: awayUrl } },
    { name: 'Signup', props: { plan: 'pro' } },
    ...extraEvents,
  ];
  expect(rows(r, 'event').map((x) => x.value).sort()).toEqual(expected.map((e) => e.name).sort());
  for (const e of expected) {
    const row = eventRow(r, e.name)!;
    expect({ name: e.name, visitors: row.visitors, occurrences: row.pageviews }).toEqual({ name: e.name, visitors: 1, occurrences: 1 });
    expect(row.props).toEqual(Object.entries(e.props).map(([key, value]) => ({ key, value, events: 1, visitors: 1 })));
  }

  // A desktop Chrome on Linux, sent by news.example; each a single visitor with both pageviews.
  for (const [dimension, value] of [['browser', 'Chrome'], ['os', 'Linux'], ['device', 'desktop'], ['referrer', 'news.example']]) {
    expect({ dimension, rows: rows(r, dimension).map((x) => ({ value: x.value, visitors: x.visitors })) }).toEqual({ dimension, rows: [{ value, visitors: 1 }] });
  }
  expect(rows(r, 'browser')[0].pageviews).toBe(2);
  expect(rows(r, 'device')[0].pageviews).toBe(2);
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  work = tempDir('vigil-browser-analytics-');
  web = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    let body: string | Buffer | undefined;
    let type = 'text/html; charset=utf-8';
    if (url.pathname === '/' || url.pathname === '/pricing') body = pages.get(url.searchParams.get('page') ?? '');
    else if (url.pathname === '/away') body = '<!doctype html><html><head><link rel="icon" href="data:,"><title>Partner</title></head><body><h1>Partner</h1></body></html>';
    else if (url.pathname === '/assets/official.js') {
      body = fs.readFileSync(path.join(work, 'www', 'assets', 'official.js'));
      type = 'text/javascript; charset=utf-8';
    }
    res.statusCode = body === undefined ? 404 : 200;
    res.setHeader('content-type', type);
    res.end(body ?? '');
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  const port = (web.address() as AddressInfo).port;
  webUrl = `http://localhost:${port}`;
  awayUrl = `http://127.0.0.1:${port}/away`;
  [browser, server] = await Promise.all([
    chromium.launch({ executablePath: CHROMIUM, args: ARGS }),
    startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' }),
  ]);
  // This Chromium's own user agent, less the `Headless` that marks it as a bot.
  chromeUa = (await (async () => {
    const c = await browser.newContext();
    const ua = await (await c.newPage()).evaluate(() => navigator.userAgent);
    await c.close();
    return ua;
  })()).replace('HeadlessChrome/', 'Chrome/');
  expect(chromeUa).toMatch(/^Mozilla\/5\.0 \(X11; Linux x86_64\) AppleWebKit\/537\.36 \(KHTML, like Gecko\) Chrome\/[\d.]+ Safari\/537\.36$/);
  await buildOfficial();
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
}, 60_000);
afterAll(async () => {
  analyticsClock.now = () => new Date();
  await browser?.close();
  await server?.close();
  await new Promise((r) => (web ? web.close(r) : r(undefined)));
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('the official @plausible-analytics/tracker: pageview, SPA navigation, custom event with props, outbound link click', async () => {
  const site = await createSite('shop.test');
  pages.set('official', officialPage(site));
  await visitShop('official', { queued: 0 });
  const r = await reportWhen(site, 'both pageviews and both custom events counted', (x) =>
    x.pageviews >= 2 && !!eventRow(x, 'Signup') && !!eventRow(x, 'Outbound Link: Click'));
  expectShopCounted(r, []);
}, 60_000);

test("Vigil's own script: the same, plus a custom event queued before the script loaded", async () => {
  const site = await createSite('own-script.test');
  pages.set('vigil', vigilPage(site));
  await visitShop('vigil', { queued: 1 });
  const r = await reportWhen(site, 'both pageviews and the three custom events counted', (x) =>
    x.pageviews >= 2 && !!eventRow(x, 'Signup') && !!eventRow(x, 'Outbound Link: Click') && !!eventRow(x, 'Newsletter'));
  expectShopCounted(r, [{ name: 'Newsletter', props: { source: 'header' } }]);
}, 60_000);

test('a visitor on two days and another on one: dailyUniqueVisitors counts three', async () => {
  const site = await createSite('uniques.test');
  pages.set('uniques', vigilPage(site));
  const visit = async (ua: string) => {
    const b = await openContext(ua);
    try {
      await b.page.goto(`${webUrl}/?page=uniques`);
      await b.answered(2); // the pageview and the queued Newsletter
      expect(b.answers.map((a) => a.status)).toEqual([202, 202]);
      expect(b.problems).toEqual([]);
    } finally {
      await b.context.close();
    }
  };
  const firefoxUa = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0';
  // Visitor A yesterday (ingestion stamps events, and picks the day's salt, by the analytics clock).
  const dayMs = 86_400_000;
  analyticsClock.now = () => new Date(Date.now() - dayMs);
  try {
    await visit(chromeUa);
  } finally {
    analyticsClock.now = () => new Date();
  }
  // Today: A again (same address and browser; a new day's salt), and B.
  await visit(chromeUa);
  await visit(firefoxUa);
  const r = await reportWhen(site, 'three pageviews counted', (x) => x.pageviews >= 3);
  expect(r).toMatchObject({ pageviews: 3, visitors: 3, dailyUniqueVisitors: 3 });
  const [yesterday, today] = r.series.slice(-2);
  expect(yesterday).toMatchObject({ date: new Date(Date.now() - dayMs).toISOString().slice(0, 10), visitors: 1, pageviews: 1 });
  expect(today).toMatchObject({ date: new Date().toISOString().slice(0, 10), visitors: 2, pageviews: 2 });
  // Per dimension too: Chrome counted once per day, Firefox once.
  expect(Object.fromEntries(rows(r, 'browser').map((x) => [x.value, x.visitors]))).toEqual({ Chrome: 2, Firefox: 1 });
  expect(Object.fromEntries(rows(r, 'os').map((x) => [x.value, x.visitors]))).toEqual({ Linux: 2, Windows: 1 });
  expect(rows(r, 'path')).toEqual([expect.objectContaining({ value: '/', visitors: 3, pageviews: 3 })]);
  expect(eventRow(r, 'Newsletter')).toMatchObject({ visitors: 3, pageviews: 3 });
}, 60_000);

test("Chromium's own HeadlessChrome user agent is a bot: answered 202 with x-plausible-dropped, never counted", async () => {
  const site = await createSite('bots.test');
  pages.set('bots', officialPage(site));
  const bot = await openContext(undefined);
  try {
    await bot.page.goto(`${webUrl}/?page=bots`);
    await bot.answered(1);
    expect(bot.answers[0]).toMatchObject({ status: 202, dropped: '1' });
  } finally {
    await bot.context.close();
  }
  // A person after the bot: once theirs is counted, the bot's would have been too (the drain goes in time order).
  await visitShop('bots', { queued: 0 });
  const r = await reportWhen(site, "the person's visit counted", (x) => x.pageviews >= 2 && !!eventRow(x, 'Outbound Link: Click'));
  expectShopCounted(r, []);
}, 60_000);
