import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { zipSync } from 'fflate';
import { ok } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';

// Access to every /api/0 upload endpoint, over the callers the API knows:
// no key, a wrong key, owner, member, viewer, a key scoped to monitor:read,
// a key confined to another workspace, and another organisation's key. The
// same rules as the /api/v1 operations they stand for: monitor:create to
// upload, monitor:read to look up, a project only within the key's
// organisation and workspaces. Refusals are {"detail"} and never echo the key.

let server: TestServer;
const MAPPING = fs.readFileSync(path.join(__dirname, 'fixtures/symbols/android/mapping.txt'));
const sha1 = (b: Buffer | Uint8Array) => crypto.createHash('sha1').update(b).digest('hex');

type Ask = { method: string; path: string; json?: unknown; form?: FormData };
type Answer = { status: number; body: any };

async function call(token: string | null, a: Ask): Promise<Answer> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  let body: BodyInit | undefined;
  if (a.json !== undefined) { headers['content-type'] = 'application/json'; body = JSON.stringify(a.json); }
  if (a.form) body = a.form;
  const res = await fetch(`${server.url}/api/0${a.path}`, { method: a.method, headers, body });
  const text = await res.text();
  if (token) expect(text).not.toContain(token);
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', RATE_LIMIT_SYMBOLS: '1000' });
}, 60_000);
afterAll(async () => { await server?.close(); });

test('each endpoint allows exactly the callers whose permission, organisation and workspace fit', async () => {
  const org = await server.org({ plan: 'business' });
  const owner = server.api(org.apiKey);
  const ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: 'Second' }), 201).id;
  const project = ok('createErrorProject', await owner.post('/errors/projects', { name: 'Web shop', workspaceId: org.workspaceId, platform: 'javascript' }), 201);
  const ref = String(project.ref);
  const member = (await server.member(org.organizationId, 'member')).apiKey;
  const viewer = (await server.member(org.organizationId, 'viewer')).apiKey;
  const readOnly = ok('createApiKey', await owner.post('/api-keys', { name: 'read', scopes: ['monitor:read'] }), 201).token;
  const confined = ok('createApiKey', await owner.post('/api-keys', { name: 'ws2', workspaceIds: [ws2] }), 201).token;
  const stranger = (await server.org({ plan: 'business' })).apiKey;

  // An empty artifact bundle, uploaded as a chunk by each caller that may (chunks are per organisation).
  const bundle = Buffer.from(zipSync({ 'manifest.json': Buffer.from(JSON.stringify({ files: {} })) }));
  const chunkForm = () => { const f = new FormData(); f.append('file_gzip', new Blob([zlib.gzipSync(bundle)]), sha1(bundle)); return f; };
  const proguardForm = () => { const f = new FormData(); f.append('file', new Blob([Buffer.from(zipSync({ 'proguard/x.txt': MAPPING }))]), 'upload.zip'); return f; };
  const v = 'web@1.0.0';

  // [ask, permission, names the project]
  const endpoints: [Ask, 'read' | 'create', boolean][] = [
    [{ method: 'GET', path: '/' }, 'read', false],
    [{ method: 'GET', path: '/organizations/anything/' }, 'read', false],
    [{ method: 'GET', path: `/projects/anything/${ref}/` }, 'read', true],
    [{ method: 'GET', path: '/projects/anything/web-shop/' }, 'read', true],
    [{ method: 'GET', path: '/organizations/anything/chunk-upload/' }, 'create', false],
    [{ method: 'POST', path: '/organizations/anything/chunk-upload/', form: chunkForm() }, 'create', false],
    [{ method: 'POST', path: '/organizations/anything/artifactbundle/assemble/', json: { checksum: sha1(bundle), chunks: [sha1(bundle)], projects: [ref] } }, 'create', true],
    [{ method: 'POST', path: `/projects/anything/${ref}/files/difs/assemble/`, json: {} }, 'create', true],
    [{ method: 'POST', path: `/projects/anything/${ref}/files/dsyms/`, form: proguardForm() }, 'create', true],
    // The mapping just uploaded (its ProGuard UUID) given a release.
    [{ method: 'POST', path: `/projects/anything/${ref}/files/proguard-artifact-releases`, json: { release_name: 'com.example.vigil@2.4.1+241', proguard_uuid: '605f2eb8-5669-59b9-930a-c3c343dc09b4' } }, 'create', true],
    [{ method: 'POST', path: '/organizations/anything/releases/', json: { version: v, projects: [ref] } }, 'create', true],
    [{ method: 'POST', path: `/projects/anything/${ref}/releases/`, json: { version: v } }, 'create', true],
    [{ method: 'PUT', path: `/organizations/anything/releases/${v}/`, json: { projects: [ref], dateReleased: '2026-01-01T00:00:00Z' } }, 'create', true],
    [{ method: 'PUT', path: `/projects/anything/${ref}/releases/${v}/`, json: {} }, 'create', true],
    [{ method: 'GET', path: `/organizations/anything/releases/${v}/files/` }, 'read', false],
    [{ method: 'GET', path: `/projects/anything/${ref}/releases/${v}/files/` }, 'read', true],
  ];
  const callers: [string, string | null, { read: boolean; create: boolean; project: boolean }][] = [
    ['no key', null, { read: false, create: false, project: false }],
    ['wrong key', 'vk_wrong', { read: false, create: false, project: false }],
    ['owner', org.apiKey, { read: true, create: true, project: true }],
    ['member', member, { read: true, create: true, project: true }],
    ['viewer', viewer, { read: true, create: false, project: true }],
    ['monitor:read key', readOnly, { read: true, create: false, project: true }],
    ['confined to another workspace', confined, { read: true, create: true, project: false }],
    ['another organisation', stranger, { read: true, create: true, project: false }],
  ];
  const seen: string[] = [];
  for (const [name, token, may] of callers) {
    for (const [ask, permission, bound] of endpoints) {
      // Forms are streams: a fresh one per request.
      const a = { ...ask, form: ask.form ? (ask.path.endsWith('dsyms/') ? proguardForm() : chunkForm()) : undefined };
      const r = await call(token, a);
      const what = `${name}: ${a.method} ${a.path} → ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`;
      seen.push(what);
      if (token === null || token === 'vk_wrong') expect([what, r.status]).toEqual([what, 401]);
      else if (!may[permission]) expect([what, r.status, r.body.detail]).toEqual([what, 403, expect.stringContaining(`monitor:${permission}`)]);
      else if (bound && !may.project) {
        // Not found: a 404, or (bundle assembly) the bundle's outcome saying so.
        const detail = r.status === 200 ? r.body.state === 'error' && r.body.detail : r.status === 404 && r.body.detail;
        expect([what, detail]).toEqual([what, expect.stringContaining('Project not found')]);
      } else {
        expect([what, r.status < 300]).toEqual([what, true]);
        if (r.body?.state) expect([what, r.body.state]).toEqual([what, 'ok']);
      }
    }
  }
  expect(seen).toHaveLength(callers.length * endpoints.length);
  if (process.env.SHOW_ACCESS) console.log(seen.join('\n'));
});
