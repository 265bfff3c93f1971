import fs from 'node:fs';
import path from 'node:path';
import { SERVER_PREFIXES, WEB_APP_CSP } from '../src/transport/webApp';
import { startTestServer, type TestServer } from './support/harness';
import { ensureWebBuilt } from './support/web';

// The web app at the base URL: index.html never cached, hashed assets cached
// for good, a CSP without inline scripts, the app's own routes answered with
// index.html when opened directly — and none of the server's paths shadowed:
// every path src/ mounts keeps its own answer, its 404 included.

const ROOT = path.resolve(__dirname, '..');
let server: TestServer;
const APP_MARK = '<div id="root"></div>';

beforeAll(async () => {
  ensureWebBuilt();
  server = await startTestServer();
}, 180_000);
afterAll(async () => { await server?.close(); });

/** Every literal path src/ mounts on the app (`app.get('/x'`, `app.use('/x'`, and the named path constants). */
function mountedPaths(): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir)) {
      const p = path.join(dir, name);
      if (fs.statSync(p).isDirectory()) { walk(p); continue; }
      if (!p.endsWith('.ts')) continue;
      const text = fs.readFileSync(p, 'utf8');
      for (const m of text.matchAll(/\bapp\.(?:get|post|use|all|put|delete)\(\s*['`](\/[^'`]*)/g)) found.add(m[1]!);
      for (const m of text.matchAll(/export const (?:[A-Z_]+_PATH) = '(\/[^']*)'/g)) found.add(m[1]!);
    }
  };
  walk(path.join(ROOT, 'src'));
  // Connect's routes are mounted by the middleware under /rpc; error ingestion under /api/<ref>/….
  found.add('/rpc/vigil.v1.MonitorService/ListMonitors');
  found.add('/api/1/envelope');
  return [...found].map((p) => p.replace(/\$\{[^}]+\}/g, 'x').replace(/:[a-z]+/gi, 'x')).sort();
}

test('every path the server mounts lies under a prefix the app never answers', () => {
  const paths = mountedPaths();
  expect(paths.length).toBeGreaterThan(20);
  const uncovered = paths.filter((p) => p !== '/' && !SERVER_PREFIXES.some((x) => p === x || p.startsWith(`${x}/`)));
  expect(uncovered).toEqual([]);
});

test('no server path is shadowed: each keeps its own answer for GET, unknown ones their 404', async () => {
  const samples = [
    ...mountedPaths(),
    '/api/v1/nope', '/api/v1/monitors', '/api/proto/nope', '/api/event', '/api/nope/envelope', '/rpc/nope', '/mcp',
    '/docs', '/docs/assets/nope', '/status/nope', '/status/nope/feed.xml', '/invitations/nope', '/password-reset/nope',
    '/confirm/nope', '/feeds/incidents/nope/feed.xml', '/ping/nope', '/probe/v1/claim', '/agent/v1/report', '/metrics',
    '/healthz', '/readyz', '/openapi.json', '/webhooks/stripe', '/js/script.js', '/tls/ask',
  ];
  const shadowed: string[] = [];
  for (const p of samples) {
    const res = await fetch(`${server.url}${p}`, { redirect: 'manual' });
    const body = await res.text();
    if (body.includes(APP_MARK)) shadowed.push(`${p} → ${res.status}`);
  }
  expect(shadowed).toEqual([]);
});

test('the app\'s routes answer index.html, never cached, under a strict CSP; assets are cached for good', async () => {
  expect(WEB_APP_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
  for (const p of ['/', '/monitors', '/monitors/mon_123/edit', '/incidents/inc_1', '/sign-in', '/reset-password']) {
    const res = await fetch(`${server.url}${p}`);
    const body = await res.text();
    expect({ p, status: res.status, app: body.includes(APP_MARK), cache: res.headers.get('cache-control'), csp: res.headers.get('content-security-policy') })
      .toEqual({ p, status: 200, app: true, cache: 'no-cache', csp: WEB_APP_CSP });
    // Nothing inline for the CSP to refuse: every script and style is a file of the app.
    expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|style=/);
  }
  const index = await (await fetch(`${server.url}/`)).text();
  const assets = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  expect(assets.length).toBeGreaterThanOrEqual(2);
  for (const a of assets) {
    // Gzipped for a client that takes it (the build's twin), the same text once unpacked; plain for one that does not.
    const zipped = await fetch(`${server.url}${a}`, { headers: { 'accept-encoding': 'gzip' } });
    const plain = await fetch(`${server.url}${a}`, { headers: { 'accept-encoding': 'identity' } });
    expect({ a, status: zipped.status, cache: zipped.headers.get('cache-control'), encoding: zipped.headers.get('content-encoding') })
      .toEqual({ a, status: 200, cache: 'public, max-age=31536000, immutable', encoding: 'gzip' });
    expect({ a, status: plain.status, cache: plain.headers.get('cache-control'), encoding: plain.headers.get('content-encoding') })
      .toEqual({ a, status: 200, cache: 'public, max-age=31536000, immutable', encoding: null });
    expect(await zipped.text()).toBe(await plain.text());
  }
  // A missing asset is a 404, not the app; a write to an app route is the API's 404.
  const missing = await fetch(`${server.url}/assets/nope-123.js`);
  expect(missing.status).toBe(404);
  expect(await missing.text()).not.toContain(APP_MARK);
  const post = await fetch(`${server.url}/monitors`, { method: 'POST' });
  expect(post.status).toBe(404);
  const head = await fetch(`${server.url}/incidents`, { method: 'HEAD' });
  expect(head.status).toBe(200);
});
