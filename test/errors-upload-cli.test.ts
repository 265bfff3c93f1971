import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { ok } from './support/expect';
import type { ApiClient, TestServer } from './support/harness';
import { openShopWorld, reportFromShop, sentryCli, SHOP_SOURCE, THROW_LINE, thrownFrame, succeeded, type Shop, type ShopWorld } from './support/sentryTools';

// sentry-cli 3.8.0, unchanged, uploads a minified bundle's maps to Vigil as
// it would to Sentry (`--url` Vigil's, a Vigil API key as the auth token, any
// organisation slug, the project by its ref or name): by debug id
// (`sourcemaps inject` then `upload`) and by release (`--release`, with a
// release created and finalised by `releases new` / `finalize`). An event
// from @sentry/browser in Chromium then reads resolved to the original file,
// line and function.

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let shop: Shop;

/** The shop bundled and minified with its map into `www/<name>/assets`. */
async function buildShop(name: string): Promise<string> {
  const dir = path.join(shop.work, 'www', name, 'assets');
  await build({
    entryPoints: [path.join(SHOP_SOURCE, 'main.js')], outfile: path.join(dir, 'app.min.js'), bundle: true, minify: true, sourcemap: true,
    format: 'iife', target: 'es2022', nodePaths: [path.join(__dirname, '..', 'node_modules')], logLevel: 'silent',
  });
  return dir;
}

async function createProject(name: string) {
  return ok('createErrorProject', await api.post('/errors/projects', { name, workspaceId: org.workspaceId, platform: 'javascript' }), 201) as { id: string; ref: number; dsn: string };
}

function expectOriginal(frame: any) {
  expect(frame).toMatchObject({ resolved: true, lineno: THROW_LINE, function: 'computeTotal' });
  expect(frame.filename).toMatch(/(^|\/)src\/cart\.js$/);
  expect(frame.contextLine).toContain('throw new Error(');
}

let world: ShopWorld | undefined;
beforeAll(async () => {
  world = await openShopWorld();
  ({ server, shop, org, api } = world);
}, 60_000);
afterAll(async () => { await world?.close(); });

test('sentry-cli info shows the key as an auth token that may upload', async () => {
  const out = succeeded(await sentryCli(3, server.url, org.apiKey, ['info'], shop.work));
  expect(out).toContain(`Sentry Server: ${server.url}`);
  expect(out).toMatch(/Method: Auth Token\n\s+Scopes:(\n\s+- [a-z:]+)*\n\s+- project:releases/);
});

test('debug ids: sourcemaps inject + upload, then a browser event resolves to the original frame', async () => {
  const project = await createProject('Shop web');
  const dir = await buildShop('ids');
  const inject = await sentryCli(3, server.url, org.apiKey, ['sourcemaps', 'inject', dir], shop.work);
  succeeded(inject);
  // Any organisation slug: the key decides the organisation. The project by its ref.
  const up = await sentryCli(3, server.url, org.apiKey, ['sourcemaps', 'upload', '--org', 'whatever', '--project', String(project.ref), dir], shop.work);
  succeeded(up);
  expect(up.out).toMatch(/debug id [0-9a-f-]{36}/);
  const stored = await server.db.selectFrom('error_sourcemaps').select(['filename', 'debug_id', 'release']).where('project_id', '=', project.id).execute();
  expect(stored).toEqual([{ filename: '~/app.min.js', debug_id: expect.stringMatching(/^[0-9a-f-]{36}$/), release: null }]);

  await reportFromShop(shop, 'ids', { dsn: project.dsn, release: 'shop@1.0.0' });
  expectOriginal(await thrownFrame(api, project.id));

  // The same bundle again: the tool is told it is there already, and nothing is charged or stored twice.
  const again = await sentryCli(3, server.url, org.apiKey, ['sourcemaps', 'upload', '--org', 'whatever', '--project', String(project.ref), dir], shop.work);
  expect(again.code).toBe(0);
});

test('release: releases new, sourcemaps upload --release --dist --url-prefix, releases finalize; the project by its name as a slug', async () => {
  const project = await createProject('Shop release');
  const dir = await buildShop('rel');
  const release = 'shop@2.0.0';
  const cli = (args: string[]) => sentryCli(3, server.url, org.apiKey, ['--log-level', 'warn', ...args], shop.work);
  expect(await cli(['releases', '--org', 'acme', '--project', 'shop-release', 'new', release])).toMatchObject({ code: 0, out: expect.stringContaining(`Created release ${release}`) });
  const up = await cli(['sourcemaps', 'upload', '--org', 'acme', '--project', 'shop-release', '--release', release, '--dist', 'web', '--url-prefix', '~/rel/assets', dir]);
  succeeded(up);
  expect(await cli(['releases', '--org', 'acme', '--project', 'shop-release', 'finalize', release])).toMatchObject({ code: 0, out: expect.stringContaining(`Finalized release ${release}`) });
  const stored = await server.db.selectFrom('error_sourcemaps').select(['filename', 'debug_id', 'release']).where('project_id', '=', project.id).execute();
  expect(stored).toEqual([{ filename: '~/rel/assets/app.min.js', debug_id: null, release }]);

  await reportFromShop(shop, 'rel', { dsn: project.dsn, release });
  expectOriginal(await thrownFrame(api, project.id));
});

test('sentry-cli 2.58.6 uploads by release the same way (artifact bundle), stored under the script name', async () => {
  const project = await createProject('Shop two');
  const dir = await buildShop('rel2');
  succeeded(await sentryCli(2, server.url, org.apiKey, ['sourcemaps', 'upload', '--org', 'acme', '--project', String(project.ref), '--release', 'shop@2.1.0', '--url-prefix', '~/rel2/assets', dir], shop.work));
  const stored = await server.db.selectFrom('error_sourcemaps').select(['filename', 'debug_id', 'release']).where('project_id', '=', project.id).execute();
  expect(stored).toEqual([{ filename: '~/rel2/assets/app.min.js', debug_id: null, release: 'shop@2.1.0' }]);
});
