import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { sentryEsbuildPlugin } from '@sentry/esbuild-plugin';
import { ok } from './support/expect';
import type { ApiClient, TestServer } from './support/harness';
import { openShopWorld, reportFromShop, SHOP_SOURCE, THROW_LINE, thrownFrame, type Shop, type ShopWorld } from './support/sentryTools';

// @sentry/esbuild-plugin 5.4.0 (which runs sentry-cli 2.58.6), unchanged in
// an esbuild build pointed at Vigil: it injects debug ids, creates and
// finalises the release and uploads the maps; an event from @sentry/browser
// in Chromium then reads resolved to the original frame. Telemetry is off
// (the plugin's option), so it talks to Vigil only.

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let shop: Shop;

let world: ShopWorld | undefined;
beforeAll(async () => {
  world = await openShopWorld();
  ({ server, shop, org, api } = world);
}, 60_000);
afterAll(async () => { await world?.close(); });

test('a build with the plugin uploads its maps; a browser event resolves to the original frame', async () => {
  const project = ok('createErrorProject', await api.post('/errors/projects', { name: 'Shop', workspaceId: org.workspaceId, platform: 'javascript' }), 201) as { id: string; ref: number; dsn: string };
  const release = 'shop@3.0.0';
  const failures: unknown[] = [];
  await build({
    entryPoints: [path.join(SHOP_SOURCE, 'main.js')], outfile: path.join(shop.work, 'www', 'esb', 'assets', 'app.min.js'), bundle: true, minify: true,
    sourcemap: true, format: 'iife', target: 'es2022', nodePaths: [path.join(__dirname, '..', 'node_modules')], logLevel: 'silent',
    plugins: [sentryEsbuildPlugin({
      url: server.url, authToken: org.apiKey, org: 'any', project: String(project.ref), telemetry: false, silent: true,
      release: { name: release }, errorHandler: (e) => { failures.push(e); },
    })],
  });
  expect(failures).toEqual([]);
  const stored = await server.db.selectFrom('error_sourcemaps').select(['filename', 'debug_id', 'release']).where('project_id', '=', project.id).execute();
  // Under the name of the plugin's temporary copy: the debug id is what finds it.
  expect(stored).toEqual([{ filename: expect.any(String), debug_id: expect.stringMatching(/^[0-9a-f-]{36}$/), release }]);
  // The plugin created the release for the project.
  expect(await server.db.selectFrom('error_releases').select('release').where('project_id', '=', project.id).execute()).toEqual([{ release }]);
  // The built bundle carries the debug id the map was stored under.
  expect(fs.readFileSync(path.join(shop.work, 'www', 'esb', 'assets', 'app.min.js'), 'utf8')).toContain(stored[0].debug_id);

  await reportFromShop(shop, 'esb', { dsn: project.dsn, release });
  const frame = await thrownFrame(api, project.id);
  expect(frame).toMatchObject({ resolved: true, lineno: THROW_LINE, function: 'computeTotal' });
  expect(frame.filename).toMatch(/(^|\/)src\/cart\.js$/);
});
