import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { zipSync } from 'fflate';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { errorsHousekeeping } from '../src/errors/housekeeping';
import { sql } from 'kysely';
import { ok } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';
import { tempDir } from './support/child';
import { sentryCli } from './support/sentryTools';

// Chunks live in PostgreSQL: one process takes them, another assembles.
// Refused uploads say why, in the `detail` sentry-cli 3.8.0 prints: a wrong
// key, a key without monitor:create, another organisation's project, a map
// over the size cap, the symbols bucket spent (a file once, however often the
// tool asks about it); and chunks that are too large or not what their
// checksum says.

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let project: { id: string; ref: number };
let work: string;
const IOS = path.join(__dirname, 'fixtures/symbols/ios');

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', RATE_LIMIT_SYMBOLS: '3' });
  org = await server.org({ plan: 'business' });
  project = ok('createErrorProject', await server.api(org.apiKey).post('/errors/projects', { name: 'App', workspaceId: org.workspaceId, platform: 'cocoa' }), 201);
  work = tempDir('vigil-upload-refusals-');
  fs.writeFileSync(path.join(work, 'a.js'), 'function a(){throw new Error("x")}\n//# sourceMappingURL=a.js.map\n');
}, 60_000);
afterAll(async () => { await server?.close(); });

const dsym = (key: string, file = 'vigil5.dSYM') =>
  sentryCli(3, server.url, key, ['debug-files', 'upload', '--org', 'any', '--project', String(project.ref), path.join(IOS, file)], work);

/** A folder with a script and its map (`sourcesContent` of `size` characters). */
function mapsDir(name: string, size = 1): string {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(work, 'a.js'), path.join(dir, 'a.js'));
  fs.writeFileSync(path.join(dir, 'a.js.map'), JSON.stringify({ version: 3, sources: ['a.ts'], sourcesContent: ['x'.repeat(size)], names: [], mappings: 'AAAA' }));
  return dir;
}

test('a wrong key and a key without monitor:create are refused with the reason', async () => {
  const wrong = await dsym('vk_not_a_key');
  expect(wrong.code).not.toBe(0);
  expect(wrong.out).toContain('sentry reported an error: Invalid token: give a Vigil API key (vk_…) as the auth token (--auth-token or SENTRY_AUTH_TOKEN). (http status: 401)');
  const viewer = await server.member(org.organizationId, 'viewer');
  const denied = await dsym(viewer.apiKey);
  expect(denied.code).not.toBe(0);
  expect(denied.out).toContain('sentry reported an error: This key lacks the permission monitor:create. Uploads need a key whose role and scopes hold monitor:create. (http status: 403)');
  expect(await server.db.selectFrom('error_symbol_builds').select('id').execute()).toEqual([]);
});

test("another organisation's project is not found, for debug files and for source maps", async () => {
  const other = await server.org({ plan: 'business' });
  const difs = await dsym(other.apiKey);
  expect(difs.code).not.toBe(0);
  expect(difs.out).toContain('error: Project not found.');
  const maps = await sentryCli(3, server.url, other.apiKey, ['sourcemaps', 'upload', '--org', 'any', '--project', String(project.ref), '--release', 'r1', mapsDir('other')], work);
  expect(maps.code).not.toBe(0);
  expect(maps.out).toContain(`error: Failed to process uploaded files: Project not found: no error project "${project.ref}" (by ref or name) among those this API key sees (its organisation, its workspaces).`);
  expect(await server.db.selectFrom('error_sourcemaps').select('id').execute()).toEqual([]);
});

test('a map over the size cap is refused at assembly, naming the file and the cap', async () => {
  const r = await sentryCli(3, server.url, org.apiKey, ['sourcemaps', 'upload', '--org', 'any', '--project', String(project.ref), '--release', 'r1', mapsDir('big', 41 * 1024 * 1024)], work);
  expect(r.code).not.toBe(0);
  expect(r.out).toContain('error: Failed to process uploaded files: ~/a.js.map: a source map may be at most 41943040 bytes decoded.');
  expect(await server.db.selectFrom('error_sourcemaps').select('id').execute()).toEqual([]);
});

test('the symbols bucket: one point a file, not a chunk or a repeated ask; then 429 with the reason', async () => {
  expect((await dsym(org.apiKey)).code).toBe(0);
  // The same file again is already assembled: answered from the kept outcome, not charged.
  expect((await dsym(org.apiKey)).code).toBe(0);
  // A fat dSYM is a debug file per architecture to sentry-cli: two uploads.
  expect((await dsym(org.apiKey, 'libvigil4.dylib.dSYM')).out).toContain('Uploaded 2 missing debug information files');
  const over = await sentryCli(3, server.url, org.apiKey, ['proguard', 'upload', '--org', 'any', '--project', String(project.ref), path.join(__dirname, 'fixtures/symbols/android/mapping.txt')], work);
  expect(over.code).not.toBe(0);
  expect(over.out).toMatch(/Rate limit exceeded; retry in \d+ seconds\. This organisation has used its symbols uploads for the hour\. \(http status: 429\)/);
});

test('chunks: one over the chunk size, or not matching its checksum, is refused whole; chunks expire after an hour', async () => {
  const post = (parts: { name: string; data: Buffer }[]) => {
    const form = new FormData();
    for (const p of parts) form.append('file_gzip', new Blob([zlib.gzipSync(p.data)]), p.name);
    return fetch(`${server.url}/api/0/organizations/any/chunk-upload/`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}` }, body: form });
  };
  const sha1 = (b: Buffer) => crypto.createHash('sha1').update(b).digest('hex');
  const big = Buffer.alloc(8 * 1024 * 1024 + 1, 7);
  const tooBig = await post([{ name: sha1(big), data: big }]);
  expect([tooBig.status, await tooBig.json()]).toEqual([413, { detail: `Chunk ${sha1(big)} is larger than 8388608 bytes, the chunk size Vigil asks for (GET chunk-upload).` }]);
  const good = Buffer.from('a chunk');
  const damaged = await post([{ name: sha1(good), data: good }, { name: sha1(good), data: Buffer.from('another') }]);
  expect(damaged.status).toBe(400);
  expect((await damaged.json()).detail).toContain(`Chunk ${sha1(good)} does not match its checksum`);
  expect((await post([{ name: sha1(good), data: good }])).status).toBe(200);
  const stored = await server.db.selectFrom('error_upload_chunks' as any).select(['checksum', 'size_bytes'] as any).execute();
  expect(stored).toContainEqual({ checksum: sha1(good), size_bytes: good.length });
  // Chunks not assembled within the hour go with the errors housekeeping.
  await sql`update error_upload_chunks set created_at = now() - interval '61 minutes' where checksum = ${sha1(good)}`.execute(server.db);
  await errorsHousekeeping(server.db);
  expect(await server.db.selectFrom('error_upload_chunks' as any).select('checksum' as any).where('checksum' as any, '=', sha1(good)).execute()).toEqual([]);
});

test('chunks posted to one process are assembled by another on the same PostgreSQL, once however many ask', async () => {
  const other = await startServer(loadConfig({ DATABASE_URL: server.databaseUrl, DATA_DIR: tempDir('vigil-upload-b-'), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER: 'false' }), createLogger('silent'));
  try {
    const debugId = crypto.randomUUID();
    const map = { version: 3, sources: ['a.ts'], names: [], mappings: 'AAAA', debug_id: debugId };
    const bundle = Buffer.from(zipSync({
      'manifest.json': Buffer.from(JSON.stringify({ files: { 'files/_/_/a.js.map': { type: 'source_map', url: '~/a.js.map', headers: { 'debug-id': debugId } } } })),
      'files/_/_/a.js.map': Buffer.from(JSON.stringify(map)),
    }));
    const sum = crypto.createHash('sha1').update(bundle).digest('hex');
    const form = new FormData();
    form.append('file_gzip', new Blob([zlib.gzipSync(bundle)]), sum);
    const auth = { authorization: `Bearer ${org.apiKey}` };
    expect((await fetch(`${server.url}/api/0/organizations/any/chunk-upload/`, { method: 'POST', headers: auth, body: form })).status).toBe(200);
    // Asked of both processes at once, several times: one request claims the file and stores it once.
    const ask = (url: string) => fetch(`${url}/api/0/organizations/any/artifactbundle/assemble/`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ checksum: sum, chunks: [sum], projects: [String(project.ref)] }),
    }).then((r) => r.json());
    const answers = await Promise.all([other.url, server.url, other.url, server.url].map(ask));
    expect(answers.map((x) => x.state).sort()).toEqual(expect.arrayContaining(['ok']));
    for (const x of answers) expect(['ok', 'assembling']).toContain(x.state);
    expect(await ask(other.url)).toEqual({ state: 'ok', missingChunks: [], detail: null });
    const stored = await server.db.selectFrom('error_sourcemaps').select(['filename', 'debug_id']).where('debug_id', '=', debugId).execute();
    expect(stored).toEqual([{ filename: '~/a.js', debug_id: debugId }]);
    const audited = await server.db.selectFrom('audit_log').select('id').where('action', '=', 'sourcemap.uploaded').where('organization_id', '=', org.organizationId).execute();
    expect(audited).toHaveLength(1);
  } finally {
    await other.close();
  }
});
