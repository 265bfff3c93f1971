import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { buildSync } from 'esbuild';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { tempDir } from './support/child';

// Source maps: a real esbuild-minified bundle throws; its event arrives with
// minified frames; the map uploaded (by release + ~/file name, or by debug
// id) — even after the event — resolves the frame to the original file, line
// and source line when the issue is read.

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;
let dir: string;
let map: Record<string, unknown>;
let thrown: { line: number; col: number };
const URL_ = 'http://shop.example/assets/bundle.js';

const SOURCE = `function computeTotal(items) {
  return items.reduce((sum, item) => sum + item.price, 0);
}
function checkout(cart) {
  if (!cart.items) throw new TypeError('cart has no items');
  return computeTotal(cart.items);
}
module.exports = { checkout };
`;

beforeAll(async () => {
  dir = tempDir('vigil-sourcemap-');
  fs.writeFileSync(path.join(dir, 'app.js'), SOURCE);
  buildSync({ entryPoints: [path.join(dir, 'app.js')], bundle: true, minify: true, sourcemap: 'external', sourcesContent: true, platform: 'node', format: 'cjs', outfile: path.join(dir, 'bundle.js'), logLevel: 'silent' });
  map = JSON.parse(fs.readFileSync(path.join(dir, 'bundle.js.map'), 'utf8'));
  // Run outside jest (which would map the stack itself): the minified position of the throw.
  const stack = execFileSync(process.execPath, ['-e', `try { require(${JSON.stringify(path.join(dir, 'bundle.js'))}).checkout({}) } catch (e) { console.log(e.stack) }`], { encoding: 'utf8' });
  const m = /bundle\.js:(\d+):(\d+)/.exec(stack)!;
  thrown = { line: Number(m[1]), col: Number(m[2]) };
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function reportMinified(extra: Record<string, unknown> = {}) {
  const p = ok('createErrorProject', await api.post('/errors/projects', { name: `web ${Math.random()}`, workspaceId: org.workspaceId, platform: 'javascript' }), 201);
  const event = {
    platform: 'javascript', release: 'web@1.0.0', ...extra,
    exception: { values: [{ type: 'TypeError', value: 'cart has no items', stacktrace: { frames: [{ abs_path: URL_, filename: URL_, function: 'n', lineno: thrown.line, colno: thrown.col, in_app: true }] } }] },
  };
  const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: `{}\n{"type":"event"}\n${JSON.stringify(event)}` });
  expect(res.status).toBe(200);
  const issue = await until('the issue', async () => ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}`))[0]);
  return { project: p, issueId: issue.id as string };
}
const frameOf = async (issueId: string) => ok('getErrorIssue', await api.get(`/errors/issues/${issueId}`)).exceptions[0].frames[0];

test('a map uploaded after the event, by release and ~/file name, resolves the minified frame to the original source', async () => {
  const { project, issueId } = await reportMinified();
  expect(await frameOf(issueId)).toMatchObject({ absPath: URL_, lineno: thrown.line, resolved: false });
  const up = ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: project.ref, filename: '~/assets/bundle.js', release: 'web@1.0.0', map }), 201);
  expect(up).toMatchObject({ projectRef: project.ref, filename: '~/assets/bundle.js', release: 'web@1.0.0', debugId: null, sizeBytes: expect.any(Number) });
  const frame = await frameOf(issueId);
  expect(frame).toMatchObject({ lineno: 5, resolved: true, contextLine: "  if (!cart.items) throw new TypeError('cart has no items');" });
  expect(frame.filename).toMatch(/app\.js$/);
  expect(frame.preContext.at(-1)).toBe('function checkout(cart) {');
  // Another release's map does not apply.
  const other = await reportMinified({ release: 'web@2.0.0' });
  expect((await frameOf(other.issueId)).resolved).toBe(false);
});

test('by debug id (gzip upload); uploading again replaces; refusals say why', async () => {
  const debugId = '00B6D977-8F2E-4C4B-9A3E-1D2C3B4A5F60';
  const { project, issueId } = await reportMinified({ release: undefined, debug_meta: { images: [{ type: 'sourcemap', code_file: URL_, debug_id: debugId }] } });
  const gz = zlib.gzipSync(JSON.stringify(map)).toString('base64');
  ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: project.ref, filename: '~/assets/bundle.js', debugId, mapGzipBase64: gz }), 201);
  ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: project.ref, filename: '~/assets/bundle.js', debugId, map }), 201);
  expect(await server.db.selectFrom('error_sourcemaps').select('id').where('project_id', '=', project.id).execute()).toHaveLength(1);
  expect(await frameOf(issueId)).toMatchObject({ lineno: 5, resolved: true });

  const none = await api.post('/sourcemaps', { projectRef: project.ref, filename: '~/a.js', map });
  expect(none.status).toBe(400);
  expect(none.body.code).toBe('sourcemap_unmatchable');
  expect((await api.post('/sourcemaps', { projectRef: project.ref, filename: '~/a.js', release: 'x', map, mapGzipBase64: gz })).status).toBe(400);
  expect((await api.post('/sourcemaps', { projectRef: project.ref, filename: '~/a.js', release: 'x', map: { version: 2 } })).body.code).toBe('sourcemap_invalid');
  expect((await api.post('/sourcemaps', { projectRef: project.ref, filename: '~/a.js', release: 'x', mapGzipBase64: 'not gzip' })).body.details.field).toBe('mapGzipBase64');
  expect((await api.post('/sourcemaps', { projectRef: 999999, filename: '~/a.js', release: 'x', map })).status).toBe(404);
  // An unusable stored map leaves the frames as sent, never an error.
  await server.db.updateTable('error_sourcemaps').set({ map_gzip: zlib.gzipSync('{"version":3,"mappings":"!!!"}') }).where('project_id', '=', project.id).execute();
  const broken = await api.get(`/errors/issues/${issueId}`);
  expect(broken.status).toBe(200);
});

test('with a map already known, minified frames are grouped by their original source: two builds of the same code are one issue', async () => {
  const p = ok('createErrorProject', await api.post('/errors/projects', { name: 'grouped after maps', workspaceId: org.workspaceId, platform: 'javascript' }), 201);
  // The same code served under two file names (a new build, a new minified function name): one map each.
  const files = ['http://shop.example/assets/bundle.js', 'http://shop.example/assets/bundle.4f2a.js'];
  for (const url of files) {
    ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: p.ref, filename: `~${new URL(url).pathname}`, release: 'web@2.0.0', map }), 201);
  }
  for (const [i, url] of files.entries()) {
    const event = { platform: 'javascript', release: 'web@2.0.0', exception: { values: [{ type: 'TypeError', value: 'cart has no items', stacktrace: { frames: [{ abs_path: url, filename: url, function: ['n', 'q'][i], lineno: thrown.line, colno: thrown.col, in_app: true }] } }] } };
    const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: `{}\n{"type":"event"}\n${JSON.stringify(event)}` });
    expect(res.status).toBe(200);
  }
  const list = await until('both grouped', async () => {
    const l = ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}&status=all`));
    return l.reduce((a: number, x: any) => a + x.timesSeen, 0) === 2 ? l : null;
  });
  expect(list).toHaveLength(1);
  // The culprit names the original function, not the minified one.
  expect(list[0].culprit).toMatch(/checkout/);
});

test('release plus filename matches the frame\'s `filename` too, and a debug id with no map of its own falls back to release plus filename', async () => {
  // The frame carries the full URL as abs_path but the bare name as filename; the map was uploaded under that name.
  const p = ok('createErrorProject', await api.post('/errors/projects', { name: 'by frame filename', workspaceId: org.workspaceId, platform: 'javascript' }), 201);
  ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: p.ref, filename: 'bundle.js', release: 'web@3.0.0', map }), 201);
  const send = async (extra: Record<string, unknown>, value: string) => {
    const event = { platform: 'javascript', release: 'web@3.0.0', ...extra, exception: { values: [{ type: 'TypeError', value, stacktrace: { frames: [{ abs_path: URL_, filename: 'bundle.js', function: 'n', lineno: thrown.line, colno: thrown.col, in_app: true }] } }] } };
    const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: `{}\n{"type":"event"}\n${JSON.stringify(event)}` });
    expect(res.status).toBe(200);
  };
  await send({}, 'by filename');
  // This event names a debug id for the file, but no map was uploaded with it: release plus filename still applies.
  await send({ debug_meta: { images: [{ type: 'sourcemap', code_file: URL_, debug_id: '11111111-2222-3333-4444-555555555555' }] } }, 'debug id without its map');
  const issues = await until('both events', async () => {
    const l = ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}&status=all`));
    return l.reduce((a: number, x: any) => a + x.timesSeen, 0) === 2 ? l : null;
  });
  for (const issue of issues) {
    expect(await frameOf(issue.id)).toMatchObject({ lineno: 5, resolved: true, contextLine: "  if (!cart.items) throw new TypeError('cart has no items');" });
  }
});

test('a matched map whose mappings cannot be parsed leaves its frames as sent, and the other frames still resolve (no 500)', async () => {
  const p = ok('createErrorProject', await api.post('/errors/projects', { name: 'broken maps', workspaceId: org.workspaceId, platform: 'javascript' }), 201);
  const broken = 'http://shop.example/assets/vendor.js';
  // Valid JSON, a version 3 map: accepted at upload; its mappings fail only when a position is looked up.
  const bad = { version: 3, file: 'vendor.js', sources: ['vendor.src.js'], names: [], mappings: 'AAAA,*;;CA@A' };
  ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: p.ref, filename: '~/assets/vendor.js', release: 'web@3.0.0', map: bad }), 201);
  ok('uploadSourceMap', await api.post('/sourcemaps', { projectRef: p.ref, filename: '~/assets/bundle.js', release: 'web@3.0.0', map }), 201);
  const event = {
    platform: 'javascript', release: 'web@3.0.0',
    exception: { values: [{ type: 'TypeError', value: 'cart has no items', stacktrace: { frames: [
      { abs_path: broken, filename: broken, function: 'v', lineno: 1, colno: 5, in_app: false },
      { abs_path: URL_, filename: URL_, function: 'n', lineno: thrown.line, colno: thrown.col, in_app: true },
      { abs_path: broken, filename: broken, function: 'w', lineno: 3, colno: 1, in_app: false },
    ] } }] },
  };
  const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: `{}\n{"type":"event"}\n${JSON.stringify(event)}` });
  expect(res.status).toBe(200);
  const issue = await until('the issue', async () => ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}`))[0]);
  const read = await api.get(`/errors/issues/${issue.id}`);
  expect(read.status).toBe(200);
  const frames = ok('getErrorIssue', read).exceptions[0].frames;
  expect(frames[0]).toMatchObject({ absPath: broken, function: 'v', lineno: 1, colno: 5, resolved: false });
  expect(frames[1]).toMatchObject({ lineno: 5, resolved: true });
  expect(frames[2]).toMatchObject({ absPath: broken, function: 'w', lineno: 3, resolved: false });
});
