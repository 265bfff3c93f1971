import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { zipSync } from 'fflate';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// Mobile symbols through the API: POST /symbols (headers, refusals, replace,
// 20 builds kept), and frames of real events resolved when the issue is read
// (symbols uploaded after the event apply): Android by release through a
// ProGuard/R8 mapping (inlined frames expanded, exception type restored), iOS
// by Mach-O UUID through a dSYM built with clang, ld64.lld and dsymutil
// (test/fixtures/symbols/ios).

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;

const ANDROID = path.join(__dirname, 'fixtures/symbols/android/mapping.txt');
const RELEASE = 'com.example.vigil@2.4.1+241';
const IOS = path.join(__dirname, 'fixtures/symbols/ios');
// The DWARF 5 executable of the fixture (its UUID as llvm-dwarfdump --uuid printed; see test/errors-dsym.test.ts).
const UUID5 = '4c4c44f4-5555-3144-a1c4-335042a70fd3';

/** The 1-based line of the fixture source line holding `MARK:<marker>`. */
function mark(file: string, marker: string): number {
  return fs.readFileSync(path.join(IOS, 'src', file), 'utf8').split('\n').findIndex((l) => l.includes(`MARK:${marker} `)) + 1;
}

async function project(name: string, platform = 'android') {
  return ok('createErrorProject', await api.post('/errors/projects', { name, workspaceId: org.workspaceId, platform }), 201) as { id: string; ref: number; publicKey: string };
}

async function send(p: { ref: number; publicKey: string }, event: Record<string, unknown>) {
  const body = ['{}', '{"type":"event"}', JSON.stringify(event)].join('\n');
  const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body });
  expect(res.status).toBe(200);
}

function upload(headers: Record<string, string>, body: Buffer | string, key = org.apiKey) {
  return server.api(key).post('/symbols', typeof body === 'string' ? body : new Uint8Array(body), { 'content-type': 'application/gzip', ...headers });
}

async function onlyIssue(projectId: string) {
  let list: any[] = [];
  await until('the event is grouped', async () => (list = ok('listErrorIssues', await api.get(`/errors/issues?project=${projectId}&status=all`))).length > 0, 20_000);
  return ok('getErrorIssue', await api.get(`/errors/issues/${list[0].id}`));
}

beforeAll(async () => {
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', RATE_LIMIT_SYMBOLS: '1000' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
});
afterAll(async () => { await server.close(); });

test('Android: a mapping uploaded after the event retraces its frames (inlined ones expanded) and exception type, matched by release exactly', async () => {
  const p = await project('Android app');
  const javaFrame = (module: string, fn: string, lineno: number) => ({ module, function: fn, lineno, filename: 'SourceFile', in_app: true });
  await send(p, {
    platform: 'java', release: RELEASE, event_id: 'a'.repeat(32),
    exception: { values: [{ type: 'd', module: 'a', value: 'probe timed out after 5000 ms', stacktrace: { frames: [
      javaFrame('android.os.Looper', 'loop', 288), javaFrame('a.b', 'a', 14), javaFrame('a.b', 'a', 5),
    ] } }] },
  });
  const before = await onlyIssue(p.id);
  expect(before.exceptions[0].frames.map((f: any) => f.resolved)).toEqual([false, false, false]);

  const mapping = fs.readFileSync(ANDROID);
  const up = ok('uploadSymbols', await upload({ 'X-Service-Project-Ref': String(p.ref), 'X-Service-Platform': 'android', 'X-Service-Symbol-Name': 'mapping.txt', 'X-Service-Release': RELEASE }, zlib.gzipSync(mapping)));
  expect(up).toMatchObject({ platform: 'android', release: RELEASE, debugIds: [], replaced: false });

  const after = await onlyIssue(p.id);
  const [x] = after.exceptions;
  expect(x.type).toBe('ProbeTimeoutException');
  const frames = x.frames.map((f: any) => [f.module, f.function, f.lineno, f.filename, f.resolved]);
  expect(frames).toEqual([
    ['android.os.Looper', 'loop', 288, 'SourceFile', false], // not in the mapping: as sent
    ['com.example.vigil.cache.LruCache', 'get', 40, 'LruCache.kt', true], // 14 in 14:16 → 40 + 0
    // 5:5 is an inline chain: the outer method first, the throw site (innermost) last.
    ['com.example.vigil.cache.LruCache', 'get', 44, 'LruCache.kt', true],
    ['com.example.vigil.cache.LruCache$Node', 'promote', 31, 'LruCache.java', true], // no sourceFile line for the nested class: derived
    ['com.example.vigil.cache.CacheEntry', 'touch', 9, 'CacheEntries.kt', true],
  ]);

  // Another release of the same app: not matched (Android matches by release exactly).
  const q = await project('Android app 2');
  await send(q, { platform: 'java', release: 'com.example.vigil@2.4.1+240', exception: { values: [{ type: 'd', module: 'a', value: 'x', stacktrace: { frames: [javaFrame('a.b', 'a', 14)] } }] } });
  ok('uploadSymbols', await upload({ 'X-Service-Project-Ref': String(q.ref), 'X-Service-Platform': 'android', 'X-Service-Symbol-Name': 'mapping.txt', 'X-Service-Release': RELEASE }, zlib.gzipSync(mapping)));
  const other = await onlyIssue(q.id);
  expect(other.exceptions[0].frames[0]).toMatchObject({ module: 'a.b', function: 'a', resolved: false });
  expect(other.exceptions[0].type).toBe('d');
});

test('uploads: the same build replaces, 20 builds are kept, refusals name the header', async () => {
  const p = await project('Builds');
  const gz = zlib.gzipSync(fs.readFileSync(ANDROID));
  const h = (release: string) => ({ 'X-Service-Project-Ref': String(p.ref), 'X-Service-Platform': 'android', 'X-Service-Symbol-Name': 'mapping.txt', 'X-Service-Release': release });
  expect(ok('uploadSymbols', await upload(h(RELEASE), gz)).replaced).toBe(false);
  expect(ok('uploadSymbols', await upload(h(RELEASE), gz)).replaced).toBe(true);
  for (let i = 0; i < 21; i++) ok('uploadSymbols', await upload(h(`com.example.vigil@3.0.${i}+${300 + i}`), gz));
  // 22 builds uploaded: the two oldest (RELEASE and 3.0.0) are gone, so re-uploading RELEASE is new again.
  expect(ok('uploadSymbols', await upload(h(RELEASE), gz)).replaced).toBe(false);
  expect(ok('uploadSymbols', await upload(h('com.example.vigil@3.0.20+320'), gz)).replaced).toBe(true);

  const refused = async (headers: Record<string, string>, body: Buffer | string, status: number, field?: string) => {
    const r = await upload(headers, body);
    expect([r.status, r.body?.code]).toEqual([status, expect.any(String)]);
    if (field) expect([r.body.details?.field, r.body.code]).toEqual([field, expect.any(String)]);
  };
  await refused({ ...h(RELEASE), 'X-Service-Release': 'not-a-release' }, gz, 400, 'X-Service-Release');
  const { 'X-Service-Release': _, ...noRelease } = h(RELEASE);
  await refused(noRelease, gz, 400, 'X-Service-Release');
  await refused({ ...h(RELEASE), 'X-Service-Platform': 'windows' }, gz, 400, 'X-Service-Platform');
  const { 'X-Service-Project-Ref': __, ...noRef } = h(RELEASE);
  await refused(noRef, gz, 400, 'X-Service-Project-Ref');
  await refused({ ...h(RELEASE), 'X-Service-Project-Ref': '999999' }, gz, 404);
  await refused(h(RELEASE), zlib.gzipSync('hello, not a mapping'), 400, 'body');
  await refused(h(RELEASE), Buffer.from([0x1f, 0x8b, 1, 2, 3]), 400, 'body');
  await refused({ ...h(RELEASE), 'X-Service-Platform': 'ios', 'X-Service-Debug-Ids': '' }, gz, 400, 'X-Service-Debug-Ids');
  await refused({ ...h(RELEASE), 'X-Service-Platform': 'ios', 'X-Service-Debug-Ids': 'nope' }, gz, 400, 'X-Service-Debug-Ids');
  // A viewer may not upload; another organisation's project is not found.
  const viewer = (await server.member(org.organizationId, 'viewer')).apiKey;
  expect((await upload(h(RELEASE), gz, viewer)).status).toBe(403);
  const other = await server.org({ plan: 'business' });
  expect((await upload(h(RELEASE), gz, other.apiKey)).status).toBe(404);
});

test('iOS: a zipped dSYM matched by Mach-O UUID symbolicates instruction addresses through the image load address, inlined code as frames of its own', async () => {
  const p = await project('iOS app', 'cocoa');
  const base = 0x104a00000;
  const hex = (n: number) => `0x${n.toString(16)}`;
  await send(p, {
    platform: 'cocoa', release: 'com.example.vigil@2.4.1+241',
    debug_meta: { images: [
      { type: 'macho', debug_id: 'FFFFFFFF-0000-0000-0000-000000000000', image_addr: '0x180000000', image_size: 4096, code_file: '/usr/lib/system/libsystem_kernel.dylib' },
      { type: 'macho', debug_id: UUID5.toUpperCase(), image_addr: hex(base), image_size: 0x8000, image_vmaddr: '0x100000000', code_file: '/private/var/containers/Bundle/Application/X/Vigil.app/Vigil', arch: 'arm64' },
    ] },
    exception: { values: [{ type: 'EXC_BAD_ACCESS', value: 'KERN_INVALID_ADDRESS at 0x0', mechanism: { type: 'mach', handled: false }, stacktrace: { frames: [
      { instruction_addr: '0x180000123', package: '/usr/lib/system/libsystem_kernel.dylib', in_app: false }, // no symbols: as sent
      { instruction_addr: hex(base + 0x402c), package: 'Vigil', in_app: true }, // a return address: the call before it
      { instruction_addr: hex(base + 0x4099), package: 'Vigil', in_app: true },
      { instruction_addr: hex(base + 0x400c), package: 'Vigil', in_app: true }, // the crashing frame: inlined code
    ] } }] },
  });
  const headers = { 'X-Service-Project-Ref': String(p.ref), 'X-Service-Platform': 'ios', 'X-Service-Symbol-Name': 'Vigil.app.dSYM.zip', 'X-Service-Release': 'com.example.vigil@2.4.1+241', 'X-Service-Debug-Ids': UUID5 };
  const dwarf = fs.readFileSync(path.join(IOS, 'vigil5.dSYM/Contents/Resources/DWARF/vigil5'));
  const zip = Buffer.from(zipSync({ 'Vigil.app.dSYM/Contents/Info.plist': Buffer.from('<plist/>'), 'Vigil.app.dSYM/Contents/Resources/DWARF/vigil5': dwarf }));
  // Symbols uploaded after the event still apply (resolved when the issue is read).
  expect((await onlyIssue(p.id)).exceptions[0].frames.every((f: any) => !f.resolved)).toBe(true);
  expect(ok('uploadSymbols', await upload(headers, zlib.gzipSync(zip)))).toMatchObject({ platform: 'ios', debugIds: [UUID5], replaced: false });
  const [x] = (await onlyIssue(p.id)).exceptions;
  expect(x.frames.map((f: any) => [f.function, f.filename, f.lineno, f.resolved])).toEqual([
    [null, null, null, false],
    ['api_entry', '/vigil/ios/src/app.c', mark('app.c', 'entry-calls-mid'), true],
    ['helper_mid', '/vigil/ios/src/work.c', mark('work.c', 'mid-calls-leaf'), true],
    // Inlined: the outer function at the call site first, the inlined one (where the crash is) last.
    ['api_entry', '/vigil/ios/src/app.c', mark('app.c', 'entry-calls-scale'), true],
    ['scale_inline', '/vigil/ios/src/scale.h', mark('scale.h', 'scale-calls-mix'), true],
  ]);
  // The bare DWARF file works too, and the same UUIDs again replace the build.
  expect(ok('uploadSymbols', await upload(headers, zlib.gzipSync(dwarf))).replaced).toBe(true);
  // A UUID the upload does not hold is refused (it could never match).
  const r = await upload({ ...headers, 'X-Service-Debug-Ids': '00000000-1111-2222-3333-444444444444' }, zlib.gzipSync(dwarf));
  expect([r.status, r.body.details?.field]).toEqual([400, 'X-Service-Debug-Ids']);
});
