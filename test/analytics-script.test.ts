import fs from 'node:fs';
import http from 'node:http';
import vm from 'node:vm';
import zlib from 'node:zlib';
import { buildScript, SCRIPT_SOURCE } from '../src/analytics/scriptRoute';
import { startTestServer, type TestServer } from './support/harness';

// Vigil's own page script at {base_url}/js/script.js: served minified with a
// JavaScript type, under 2 KB gzipped (and so is the source as written, served
// when esbuild is not installed), cached for an hour under an ETag, gzipped
// when accepted. Its behaviour is checked here in a stubbed browser (queue,
// opt-out, SPA, outbound links) and for real in analytics-browser.test.ts.

const LIMIT = 2048;
let server: TestServer;

/** A raw GET (fetch would decompress and hide Content-Encoding/Length). */
function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  await server?.close();
});

test('served minified with a JavaScript type, under 2 KB gzipped, gzip only when accepted', async () => {
  const plain = await get('/js/script.js');
  expect(plain.status).toBe(200);
  expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
  const text = plain.body.toString('utf8');
  // Minified: no comment of the source survives, and it is much shorter than the source.
  const source = fs.readFileSync(SCRIPT_SOURCE, 'utf8');
  expect(text).not.toContain('/*');
  expect(text.length).toBeLessThan(source.length / 2);
  expect(() => new vm.Script(text)).not.toThrow();
  expect(text).toContain('../api/event');
  expect(text).toContain('Outbound Link: Click');

  const gz = await get('/js/script.js', { 'accept-encoding': 'gzip, deflate, br' });
  expect(gz.status).toBe(200);
  expect(gz.headers['content-encoding']).toBe('gzip');
  expect(gz.headers['content-type']).toBe('text/javascript; charset=utf-8');
  expect(Number(gz.headers['content-length'])).toBe(gz.body.length);
  expect(zlib.gunzipSync(gz.body).toString('utf8')).toBe(text);
  expect(gz.body.length).toBeLessThan(LIMIT);
  // Computed independently of what the server chose: the script gzipped at the default level.
  expect(zlib.gzipSync(plain.body).length).toBeLessThan(LIMIT);

  // gzip refused by q=0: served plain.
  expect((await get('/js/script.js', { 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding']).toBeUndefined();
  // HEAD: the same headers, no body.
  const head = await get('/js/script.js', { 'accept-encoding': 'gzip' }, 'HEAD');
  expect(head.status).toBe(200);
  expect(head.headers['content-length']).toBe(gz.headers['content-length']);
  expect(head.body.length).toBe(0);
});

test('the source as written (served when esbuild is missing) is under 2 KB gzipped too', () => {
  const source = fs.readFileSync(SCRIPT_SOURCE);
  expect(zlib.gzipSync(source).length).toBeLessThan(LIMIT);
  const built = buildScript();
  expect(built.minified).toBe(true);
  expect(built.gzip.length).toBeLessThan(LIMIT);
});

test('cached for an hour under an ETag per encoding; If-None-Match answers 304', async () => {
  const plain = await get('/js/script.js');
  const gz = await get('/js/script.js', { 'accept-encoding': 'gzip' });
  for (const r of [plain, gz]) {
    expect(r.headers['cache-control']).toBe('public, max-age=3600');
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(r.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(r.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(r.headers['set-cookie']).toBeUndefined();
  }
  expect(gz.headers.etag).not.toBe(plain.headers.etag);
  // Stable across requests.
  expect((await get('/js/script.js')).headers.etag).toBe(plain.headers.etag);

  const again = await get('/js/script.js', { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag! });
  expect(again.status).toBe(304);
  expect(again.body.length).toBe(0);
  expect(again.headers.etag).toBe(gz.headers.etag);
  expect(again.headers['cache-control']).toBe('public, max-age=3600');
  // Weak comparison, and a list.
  expect((await get('/js/script.js', { 'if-none-match': `"other", W/${plain.headers.etag}` })).status).toBe(304);
  expect((await get('/js/script.js', { 'if-none-match': '"other"' })).status).toBe(200);
});

type Sent = { url: string; init: RequestInit; body: Record<string, unknown> };

/**
 * Runs the served script in a stubbed browser: the script element, location,
 * history, listeners, localStorage and a recording fetch. `before` runs first
 * (the page's own inline snippet).
 */
async function stubBrowser(opts: { src?: string; ignore?: string; before?: string; visibility?: string; site?: string } = {}) {
  const code = (await get('/js/script.js')).body.toString('utf8');
  const sent: Sent[] = [];
  const listeners: Record<string, ((e: any) => void)[]> = {};
  const on = (type: string, fn: (e: any) => void) => { (listeners[type] ??= []).push(fn); };
  const loc = new URL('https://shop.test/');
  const attrs: Record<string, string> = { 'data-site': opts.site ?? 'pub123' };
  const doc: any = {
    currentScript: { src: opts.src ?? 'https://vigil.example/js/script.js', getAttribute: (n: string) => attrs[n] ?? null },
    referrer: 'https://news.example/item?id=1',
    visibilityState: opts.visibility ?? 'visible',
    addEventListener: on,
  };
  const location = {
    get href() { return loc.href; },
    get pathname() { return loc.pathname; },
    get host() { return loc.host; },
  };
  const history = {
    pushState(_s: unknown, _t: string, url: string) { const u = new URL(url, loc); loc.href = u.href; },
  };
  const window: any = {
    localStorage: opts.ignore === undefined ? {} : { vigil_ignore: opts.ignore },
    history, addEventListener: on,
  };
  const fetch = (url: string, init: RequestInit) => {
    sent.push({ url, init, body: JSON.parse(String(init.body)) });
    return Promise.resolve({ status: 202 });
  };
  const ctx = vm.createContext({ window, document: doc, location, history, fetch, URL });
  window.window = window;
  if (opts.before) vm.runInContext(opts.before, ctx);
  vm.runInContext(code, ctx);
  const fire = (type: string, e: any) => { for (const fn of listeners[type] ?? []) fn({ type, ...e }); };
  const link = (href: string) => {
    const a = new URL(href, loc);
    return { target: { closest: (sel: string) => (sel === 'a[href]' ? { href: a.href, host: a.host } : null) } };
  };
  return { sent, window, history, doc, fire, link, loc, ctx };
}

test('in a stubbed browser: payload, queue before load, SPA only on a new pathname, outbound links, props', async () => {
  const b = await stubBrowser({
    before: `window.vigil = window.vigil || function () { (window.vigil.q = window.vigil.q || []).push(arguments) };
             window.vigil('Early', { props: { from: 'queue' } });`,
  });
  // The pageview first, then what was queued.
  expect(b.sent.map((s) => s.body.n)).toEqual(['pageview', 'Early']);
  const [pv, early] = b.sent;
  expect(pv.url).toBe('https://vigil.example/api/event');
  expect(pv.init).toMatchObject({ method: 'POST', keepalive: true, headers: { 'Content-Type': 'text/plain' } });
  expect(pv.body).toEqual({ n: 'pageview', u: 'https://shop.test/', d: 'pub123', r: 'https://news.example/item?id=1' });
  expect(early.body).toMatchObject({ n: 'Early', d: 'pub123', p: { from: 'queue' } });

  b.history.pushState({}, '', '/pricing?x=1');
  b.history.pushState({}, '', '/pricing?x=2'); // same pathname: no pageview
  b.history.pushState({}, '', '/pricing#plans');
  b.loc.href = 'https://shop.test/';
  b.fire('popstate', {});
  b.fire('popstate', {});
  expect(b.sent.slice(2).map((s) => [s.body.n, s.body.u])).toEqual([['pageview', 'https://shop.test/pricing?x=1'], ['pageview', 'https://shop.test/']]);

  b.window.vigil('Signup', { props: { plan: 'pro' }, interactive: false });
  expect(b.sent.at(-1)!.body).toEqual({ n: 'Signup', u: 'https://shop.test/', d: 'pub123', r: 'https://news.example/item?id=1', p: { plan: 'pro' }, i: false });

  const n = b.sent.length;
  b.fire('click', b.link('/cart'));
  b.fire('click', b.link('https://shop.test/about'));
  b.fire('click', b.link('mailto:a@example.test'));
  b.fire('auxclick', { button: 2, ...b.link('https://elsewhere.example/') }); // right click: not a visit
  expect(b.sent.length).toBe(n);
  b.fire('click', b.link('https://elsewhere.example/a?b=c'));
  b.fire('auxclick', { button: 1, ...b.link('https://www.shop.test/') });
  expect(b.sent.slice(n).map((s) => s.body)).toEqual([
    expect.objectContaining({ n: 'Outbound Link: Click', p: { url: 'https://elsewhere.example/a?b=c' } }),
    expect.objectContaining({ n: 'Outbound Link: Click', p: { url: 'https://www.shop.test/' } }),
  ]);

  // Restored from the back/forward cache: a pageview again, same pathname or not.
  b.fire('pageshow', { persisted: true });
  expect(b.sent.at(-1)!.body).toMatchObject({ n: 'pageview', u: 'https://shop.test/' });
});

test('in a stubbed browser: the endpoint follows the base path; opt-out; hidden pages wait; callback', async () => {
  const prefixed = await stubBrowser({ src: 'https://example.com/vigil/js/script.js?v=2' });
  expect(prefixed.sent[0].url).toBe('https://example.com/vigil/api/event');

  const ignored = await stubBrowser({ ignore: 'true' });
  const results: unknown[] = [];
  ignored.window.vigil('Signup', { callback: (r: unknown) => results.push(r ?? 'ignored') });
  expect(ignored.sent).toEqual([]);
  expect(results).toEqual(['ignored']);
  expect((await stubBrowser({ ignore: 'false' })).sent).toHaveLength(1);

  const hidden = await stubBrowser({ visibility: 'prerender' });
  expect(hidden.sent).toEqual([]);
  hidden.doc.visibilityState = 'visible';
  hidden.fire('visibilitychange', {});
  hidden.fire('visibilitychange', {});
  expect(hidden.sent.map((s) => s.body.n)).toEqual(['pageview']);

  const cb = await stubBrowser();
  const got = await new Promise((resolve) => cb.window.vigil('Signup', { callback: resolve }));
  expect(got).toEqual({ status: 202 });
});
