import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ROOT, tempDir, execTracked } from './support/child';

// Error projects and Sentry-compatible ingestion: the unchanged @sentry/node
// SDK reports to a project's DSN; envelopes with and without item lengths,
// compressed or not, the legacy store endpoint, Relay's CORS, keys by header,
// query or envelope header, refusals (unknown key 403 with nothing stored,
// malformed 400 with a reason, oversize 413) and the rate limit the SDKs back
// off from.

const run = execTracked;
let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;
let dir: string;

async function project(name: string, workspaceId = org.workspaceId) {
  return ok('createErrorProject', await api.post('/errors/projects', { name, workspaceId, platform: 'node' }), 201) as { id: string; ref: number; publicKey: string; dsn: string };
}

// Payloads are stored as the JSON text the SDK sent (migration 0028).
const stored = async (projectId: string) => (await server.db.selectFrom('error_events').select(['event_id', 'payload']).where('project_id', '=', projectId).orderBy('seq').execute())
  .map((e) => ({ ...e, payload: JSON.parse(e.payload) as unknown }));

async function post(p: { ref: number; publicKey: string }, body: string | Buffer, opts: { path?: string; headers?: Record<string, string>; key?: 'query' | 'header' | 'none' } = {}) {
  const key = opts.key ?? 'query';
  const q = key === 'query' ? `?sentry_version=7&sentry_key=${p.publicKey}&sentry_client=test%2F1` : '';
  const headers: Record<string, string> = { ...(key === 'header' ? { 'x-sentry-auth': `Sentry sentry_version=7, sentry_client=test/1, sentry_key=${p.publicKey}` } : {}), ...opts.headers };
  const res = await fetch(`${server.url}/api/${p.ref}/${opts.path ?? 'envelope'}/${q}`, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}

beforeAll(async () => {
  server = await startTestServer({ BASE_URL: '', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', ERRORS_PER_PROJECT_PER_MINUTE: '50' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
  // Inside the project, so that the script's `import '@sentry/node'` finds node_modules.
  dir = tempDir('.vigil-sentry-', path.join(ROOT, 'node_modules'));
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('projects: created with a DSN, listed, renamed, deleted; confined keys see their workspaces\' only', async () => {
  const p = await project('Checkout API');
  expect(p).toMatchObject({ name: 'Checkout API', platform: 'node', workspaceId: org.workspaceId, unresolved: 0, eventsLast24h: 0 });
  expect(p.publicKey).toMatch(/^[0-9a-f]{32}$/);
  expect(p.dsn).toBe(`${server.url.replace('//', `//${p.publicKey}@`)}/${p.ref}`);
  expect(ok('listErrorProjects', await api.get('/errors/projects')).map((x: any) => x.id)).toContain(p.id);
  expect(ok('updateErrorProject', await api.patch(`/errors/projects/${p.id}`, { name: 'Checkout' })).name).toBe('Checkout');
  expect((await api.patch(`/errors/projects/${p.id}`, {})).status).toBe(400);
  expect((await api.post('/errors/projects', { name: ' ', workspaceId: org.workspaceId })).body.details.field).toBe('name');
  expect((await api.post('/errors/projects', { name: 'x', workspaceId: 'ws_nope' })).status).toBe(404);
  const other = ok('createWorkspace', await api.post('/workspaces', { name: 'Other team' }), 201);
  const hidden = await project('Other team app', other.id);
  const confined = server.api((await server.member(org.organizationId, 'admin', [org.workspaceId])).apiKey);
  const seen = ok('listErrorProjects', await confined.get('/errors/projects')).map((x: any) => x.id);
  expect(seen).toContain(p.id);
  expect(seen).not.toContain(hidden.id);
  expect((await confined.delete(`/errors/projects/${hidden.id}`)).status).toBe(404);
  ok('deleteErrorProject', await api.delete(`/errors/projects/${hidden.id}`));
  // Its DSN stops at once.
  expect((await post(hidden, '{}\n{"type":"event"}\n{"message":"x"}')).status).toBe(403);
});

test('the unchanged @sentry/node SDK reports to the DSN: exceptions with their cause chain, messages, release and environment', async () => {
  const p = await project('Node app');
  const script = path.join(dir, 'app.mjs');
  fs.writeFileSync(script, `
import * as Sentry from '@sentry/node';
Sentry.init({ dsn: process.env.DSN, release: 'myapp@1.2.3', environment: 'staging', tracesSampleRate: 0 });
function inner() { throw new TypeError('low-level failure'); }
function outer() { try { inner(); } catch (cause) { throw new Error('high-level failure', { cause }); } }
try { outer(); } catch (e) { Sentry.captureException(e); }
Sentry.setTag('feature', 'checkout');
Sentry.captureMessage('Cache warm-up took too long', 'warning');
await Sentry.flush(10000);
`);
  await run(process.execPath, [script], { cwd: ROOT, env: { ...process.env, DSN: p.dsn }, timeoutMs: 30_000 });
  const events = await stored(p.id);
  expect(events).toHaveLength(2);
  // The SDK sends its two envelopes at once and group-commit batches may commit in
  // either order, so they are told apart by content, not by arrival.
  const payloads = events.map((e) => e.payload as any);
  const message = payloads.find((e) => e.message === 'Cache warm-up took too long');
  const error = payloads.find((e) => e !== message);
  expect(events[0].event_id).toMatch(/^[0-9a-f]{32}$/);
  expect(error).toMatchObject({ release: 'myapp@1.2.3', environment: 'staging', level: 'error', platform: 'node' });
  // The SDK's chain as sent: the cause first, the thrown error last.
  expect(error.exception.values.map((v: any) => [v.type, v.value])).toEqual([['TypeError', 'low-level failure'], ['Error', 'high-level failure']]);
  expect(error.exception.values[0].stacktrace.frames.at(-1)).toMatchObject({ function: 'inner' });
  expect(message).toMatchObject({ message: 'Cache warm-up took too long', level: 'warning', tags: { feature: 'checkout' } });
  expect(ok('listErrorProjects', await api.get('/errors/projects')).find((x: any) => x.id === p.id).eventsLast24h).toBe(2);
});

test('envelopes with and without lengths, gzip and deflate, the store endpoint, keys by header and envelope dsn; other items skipped', async () => {
  const p = await project('Raw envelopes');
  const id = 'a'.repeat(32);
  const event = JSON.stringify({ event_id: id, message: 'one\ntwo', level: 'error' });
  const attachment = 'binary\ncontent';
  const withLengths = `{"event_id":"${id}"}\n{"type":"event","length":${Buffer.byteLength(event)}}\n${event}\n{"type":"attachment","length":${attachment.length},"filename":"a.txt"}\n${attachment}\n{"type":"session"}\n{"sid":"x","status":"ok"}`;
  expect(await post(p, withLengths)).toMatchObject({ status: 200, body: { id } });
  const noLengths = `{}\n{"type":"client_report"}\n{"discarded_events":[]}\n{"type":"event"}\n{"message":"plain"}`;
  const r2 = await post(p, zlib.gzipSync(noLengths), { headers: { 'content-encoding': 'gzip' }, key: 'header' });
  expect(r2.status).toBe(200);
  expect(r2.body.id).toMatch(/^[0-9a-f]{32}$/);
  expect((await post(p, zlib.deflateSync(noLengths), { headers: { 'content-encoding': 'deflate', 'content-type': 'text/plain;charset=UTF-8' } })).status).toBe(200);
  const viaDsn = `{"dsn":"${p.dsn}"}\n{"type":"event"}\n{"message":"dsn header"}\n`;
  expect((await post(p, viaDsn, { key: 'none' })).status).toBe(200);
  expect((await post(p, JSON.stringify({ message: 'legacy store' }), { path: 'store' })).status).toBe(200);
  // Only spans and sessions: accepted, nothing stored, no id.
  expect(await post(p, '{}\n{"type":"span","item_count":1}\n{"version":2,"items":[]}')).toMatchObject({ status: 200, body: {} });
  const messages = (await stored(p.id)).map((e) => (e.payload as any).message);
  expect(messages).toEqual(['one\ntwo', 'plain', 'plain', 'dsn header', 'legacy store']);
});

test('refusals: unknown key 403 and nothing stored, malformed 400 with a reason, an oversized event 413; CORS as Relay', async () => {
  const p = await project('Refusals');
  const wrong = await post({ ...p, publicKey: 'f'.repeat(32) }, '{}\n{"type":"event"}\n{"message":"x"}');
  expect(wrong.status).toBe(403);
  expect((await post(p, '{}\n{"type":"event"}\n{"message":"x"}', { key: 'none' })).status).toBe(403);
  expect((await post({ ...p, ref: 99999999 }, '{}')).status).toBe(403);
  const bad = await post(p, '{}\n{"type":"event"}\n{not json');
  expect(bad.status).toBe(400);
  expect(bad.headers.get('x-sentry-error')).toMatch(/not JSON/);
  expect((await post(p, 'not an envelope')).status).toBe(400);
  expect((await post(p, '{}\n{"type":"event","length":999}\n{}')).status).toBe(400);
  const big = JSON.stringify({ message: 'x'.repeat(1024 * 1024 + 10) });
  expect((await post(p, `{}\n{"type":"event"}\n${big}`)).status).toBe(413);
  expect(await stored(p.id)).toEqual([]);
  const pre = await fetch(`${server.url}/api/${p.ref}/envelope/`, { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } });
  expect(pre.status).toBe(200);
  expect(pre.headers.get('access-control-allow-origin')).toBe('*');
  const okRes = await post(p, '{}\n{"type":"event"}\n{"message":"cors"}', { headers: { origin: 'https://shop.example', 'content-type': 'text/plain;charset=UTF-8' } });
  expect(okRes.headers.get('access-control-allow-origin')).toBe('*');
  expect(okRes.headers.get('access-control-expose-headers')).toBe('x-sentry-error, x-sentry-rate-limits, retry-after');
});

test('over the project\'s rate: 429 with Retry-After and X-Sentry-Rate-Limits; nothing over it stored', async () => {
  const p = await project('Noisy');
  const envelope = '{}\n{"type":"event"}\n{"message":"again"}';
  const statuses: number[] = [];
  let limited: Awaited<ReturnType<typeof post>> | null = null;
  for (let i = 0; i < 55; i++) {
    const r = await post(p, envelope);
    statuses.push(r.status);
    if (r.status === 429) limited = r;
  }
  expect(statuses.filter((s) => s === 200)).toHaveLength(50);
  expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(limited!.headers.get('x-sentry-rate-limits')).toMatch(/^\d+:error;default;security:project:project_rate_limited$/);
  expect(await stored(p.id)).toHaveLength(50);
});

test('the unchanged @sentry/node SDK backs off on the 429: events over the rate are dropped in the app, not sent', async () => {
  const p = await project('Backing off');
  // A loopback proxy between the SDK and Vigil records what the SDK really sends.
  const seen: { types: string[]; status: number }[] = [];
  const target = new URL(server.url);
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(body).toString() : body.toString();
      const types = text.split('\n').slice(1).flatMap((l) => { try { const t = JSON.parse(l).type; return typeof t === 'string' ? [t] : []; } catch { return []; } });
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (r) => {
        seen.push({ types, status: r.statusCode ?? 0 });
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const dsn = p.dsn.replace(target.host, `127.0.0.1:${(proxy.address() as { port: number }).port}`);
  const script = path.join(dir, 'backoff.mjs');
  fs.writeFileSync(script, `
import * as Sentry from '@sentry/node';
Sentry.init({ dsn: process.env.DSN, tracesSampleRate: 0, sendClientReports: true });
for (let i = 0; i < 60; i++) { Sentry.captureException(new Error('noisy ' + i)); await Sentry.flush(5000); }
`);
  try {
    await run(process.execPath, [script], { cwd: ROOT, env: { ...process.env, DSN: dsn }, timeoutMs: 60_000 });
  } finally {
    proxy.close();
  }
  const events = seen.filter((s) => s.types.includes('event'));
  // 50 a minute for this server: 50 accepted, one refused with X-Sentry-Rate-Limits, then the SDK stops sending errors.
  expect(events.filter((s) => s.status === 200)).toHaveLength(50);
  expect(events.filter((s) => s.status === 429)).toHaveLength(1);
  expect(events).toHaveLength(51);
  expect(await stored(p.id)).toHaveLength(50);
});

test('events are stored as sent: a NUL escape in a string (which jsonb refuses) neither loses the event nor sinks its batch', async () => {
  const p = await project('Odd strings');
  const odd = '{}\n{"type":"event"}\n{"message":"nul \\u0000 here","extra":{"k":"\\ud800 lone"}}';
  const plain = '{}\n{"type":"event"}\n{"message":"plain"}';
  const answers = await Promise.all([post(p, odd), post(p, plain), post(p, odd)]);
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
  const events = await stored(p.id);
  expect(events.map((e) => (e.payload as any).message).sort()).toEqual(['nul \u0000 here', 'nul \u0000 here', 'plain']);
});

test('the ingestion paths read as the app reads them: a percent-encoded project number or key name; /api/v1 stays the API\'s', async () => {
  const p = await project('Spellings');
  const body = '{}\n{"type":"event"}\n{"message":"spelled"}';
  const encodedRef = String(p.ref).split('').map((c) => `%3${c}`).join('');
  for (const url of [`/api/${encodedRef}/envelope/?sentry_key=${p.publicKey}`, `/api/${p.ref}/envelope/?sentry%5Fkey=${p.publicKey}`, `/api/${p.ref}/store?sentry_key=${p.publicKey}`]) {
    const res = await fetch(`${server.url}${url}`, { method: 'POST', body: url.includes('store') ? '{"message":"spelled"}' : body });
    expect([url, res.status]).toEqual([url, 200]);
  }
  expect((await stored(p.id)).map((e) => (e.payload as any).message)).toEqual(['spelled', 'spelled', 'spelled']);
  const api404 = await fetch(`${server.url}/api/v1/envelope`, { method: 'POST', body });
  expect(api404.status).toBe(404);
  expect(await api404.json()).not.toMatchObject({ detail: 'No such project.' });
});

test('as Relay: a zstd body is read (a fixture made by the zstd tool), and old sentry-java\'s `Content-Encoding: UTF-8` is ignored', async () => {
  const p = await project('Encodings');
  const zst = fs.readFileSync(path.join(ROOT, 'test/fixtures/errors-ingest/envelope.zst'));
  expect((await post(p, zst, { headers: { 'content-encoding': 'zstd' } })).status).toBe(200);
  expect((await post(p, '{}\n{"type":"event"}\n{"message":"utf-8 encoding"}', { headers: { 'content-encoding': 'UTF-8' } })).status).toBe(200);
  const bad = await post(p, Buffer.from('not zstd at all'), { headers: { 'content-encoding': 'zstd' } });
  expect(bad.status).toBe(400);
  expect((await stored(p.id)).map((e) => (e.payload as any).message)).toEqual(['zstd body', 'utf-8 encoding']);
});
