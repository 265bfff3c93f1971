import fs from 'node:fs';
import path from 'node:path';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { tempDir } from './support/child';
import { sentryCli, succeeded } from './support/sentryTools';

// Mobile symbols uploaded by sentry-cli 3.8.0 as mobile teams run it:
// `debug-files upload` of a dSYM (the fixture of test/errors-symbols.test.ts)
// and `proguard upload` of an R8 mapping (`debug-files upload` does not pick
// ProGuard mappings up in sentry-cli 2 or 3), stored where POST /symbols
// stores them; then an iOS event symbolicated by Mach-O UUID and an Android
// event retraced by the ProGuard UUID it carries, as the Android SDK sends it.
// sentry-cli 2.58.6 (the one the bundler plugins run) uploads the same way.

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let work: string;
const FIXTURES = path.join(__dirname, 'fixtures/symbols');
const UUID5 = '4c4c44f4-5555-3144-a1c4-335042a70fd3';
/** The ProGuard UUID of the mapping fixture, as `sentry-cli debug-files check` prints it. */
const PROGUARD_UUID = '605f2eb8-5669-59b9-930a-c3c343dc09b4';

/** The 1-based line of the fixture source line holding `MARK:<marker>`. */
const mark = (file: string, marker: string) =>
  fs.readFileSync(path.join(FIXTURES, 'ios/src', file), 'utf8').split('\n').findIndex((l) => l.includes(`MARK:${marker} `)) + 1;

async function project(name: string, platform: string) {
  return ok('createErrorProject', await api.post('/errors/projects', { name, workspaceId: org.workspaceId, platform }), 201) as { id: string; ref: number; publicKey: string };
}

async function send(p: { ref: number; publicKey: string }, event: Record<string, unknown>) {
  const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: ['{}', '{"type":"event"}', JSON.stringify(event)].join('\n') });
  expect(res.status).toBe(200);
}

async function onlyIssue(projectId: string) {
  const [first] = await until('the event is grouped', async () => {
    const l = ok('listErrorIssues', await api.get(`/errors/issues?project=${projectId}&status=all`)) as { id: string }[];
    return l.length ? l : null;
  }, 20_000);
  return ok('getErrorIssue', await api.get(`/errors/issues/${first.id}`));
}

beforeAll(async () => {
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
  work = tempDir('vigil-upload-symbols-');
}, 60_000);
afterAll(async () => { await server?.close(); });

test('iOS: debug-files upload of a dSYM, then an event symbolicated through it', async () => {
  const p = await project('iOS app', 'cocoa');
  const out = succeeded(await sentryCli(3, server.url, org.apiKey, ['debug-files', 'upload', '--org', 'any', '--project', String(p.ref), path.join(FIXTURES, 'ios/vigil5.dSYM')], work));
  expect(out).toContain(`OK ${UUID5} (vigil5; any)`);
  const base = 0x104a00000;
  const hex = (n: number) => `0x${n.toString(16)}`;
  await send(p, {
    platform: 'cocoa', release: 'com.example.vigil@2.4.1+241',
    debug_meta: { images: [{ type: 'macho', debug_id: UUID5.toUpperCase(), image_addr: hex(base), image_size: 0x8000, image_vmaddr: '0x100000000', code_file: '/private/var/containers/Bundle/Application/X/Vigil.app/Vigil', arch: 'arm64' }] },
    exception: { values: [{ type: 'EXC_BAD_ACCESS', value: 'KERN_INVALID_ADDRESS at 0x0', mechanism: { type: 'mach', handled: false }, stacktrace: { frames: [
      { instruction_addr: hex(base + 0x402c), package: 'Vigil', in_app: true },
      { instruction_addr: hex(base + 0x4099), package: 'Vigil', in_app: true },
    ] } }] },
  });
  const [x] = (await onlyIssue(p.id)).exceptions;
  expect(x.frames.map((f: any) => [f.function, f.filename, f.lineno, f.resolved])).toEqual([
    ['api_entry', '/vigil/ios/src/app.c', mark('app.c', 'entry-calls-mid'), true],
    ['helper_mid', '/vigil/ios/src/work.c', mark('work.c', 'mid-calls-leaf'), true],
  ]);
  const builds = await server.db.selectFrom('error_symbol_builds').select(['platform', 'name', 'debug_ids']).where('project_id', '=', p.id).execute();
  expect(builds).toEqual([{ platform: 'ios', name: 'vigil5', debug_ids: [UUID5] }]);
});

test('Android: proguard upload of a mapping, then an event retraced by its ProGuard UUID (its release matches no build)', async () => {
  const p = await project('Android app', 'android');
  const out = succeeded(await sentryCli(3, server.url, org.apiKey, ['proguard', 'upload', '--org', 'any', '--project', String(p.ref), path.join(FIXTURES, 'android/mapping.txt')], work));
  expect(out).toContain(`OK ${PROGUARD_UUID}`);
  const javaFrame = (module: string, fn: string, lineno: number) => ({ module, function: fn, lineno, filename: 'SourceFile', in_app: true });
  await send(p, {
    platform: 'java', release: 'com.example.vigil@9.9.9+999',
    debug_meta: { images: [{ type: 'proguard', uuid: PROGUARD_UUID }] },
    exception: { values: [{ type: 'd', module: 'a', value: 'probe timed out after 5000 ms', stacktrace: { frames: [javaFrame('android.os.Looper', 'loop', 288), javaFrame('a.b', 'a', 14)] } }] },
  });
  const [x] = (await onlyIssue(p.id)).exceptions;
  expect(x.type).toBe('ProbeTimeoutException');
  expect(x.frames.map((f: any) => [f.module, f.function, f.lineno, f.filename, f.resolved])).toEqual([
    ['android.os.Looper', 'loop', 288, 'SourceFile', false],
    ['com.example.vigil.cache.LruCache', 'get', 40, 'LruCache.kt', true],
  ]);
});

test('sentry-cli 2.58.6 uploads the same dSYM, and the mapping with its release (--app-id --version --version-code), which events of that release match', async () => {
  const p = await project('Both', 'android');
  succeeded(await sentryCli(2, server.url, org.apiKey, ['debug-files', 'upload', '--org', 'any', '--project', String(p.ref), path.join(FIXTURES, 'ios/vigil5.dSYM')], work));
  succeeded(await sentryCli(2, server.url, org.apiKey, ['upload-proguard', '--org', 'any', '--project', String(p.ref),
    '--app-id', 'com.example.vigil', '--version', '2.4.1', '--version-code', '241', path.join(FIXTURES, 'android/mapping.txt')], work));
  const builds = await server.db.selectFrom('error_symbol_builds').select(['platform', 'debug_ids', 'release']).where('project_id', '=', p.id).orderBy('platform').execute();
  expect(builds).toEqual([{ platform: 'android', debug_ids: [PROGUARD_UUID], release: 'com.example.vigil@2.4.1+241' }, { platform: 'ios', debug_ids: [UUID5], release: null }]);
  // An event without the ProGuard UUID, matched by its release alone.
  await send(p, { platform: 'java', release: 'com.example.vigil@2.4.1+241', exception: { values: [{ type: 'd', module: 'a', value: 'x', stacktrace: { frames: [
    { module: 'a.b', function: 'a', lineno: 14, filename: 'SourceFile', in_app: true },
  ] } }] } });
  const [x] = (await onlyIssue(p.id)).exceptions;
  expect(x.frames.map((f: any) => [f.module, f.function, f.lineno, f.resolved])).toEqual([['com.example.vigil.cache.LruCache', 'get', 40, true]]);
});

