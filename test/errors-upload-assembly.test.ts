import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { zipSync } from 'fflate';
import pg from 'pg';
import { sql } from 'kysely';
import { authenticate } from '../src/auth/authenticate';
import type { Caller } from '../src/auth/caller';
import { loadConfig } from '../src/config';
import { assembleOnce, type Outcome } from '../src/errors/upload/assembly';
import { storeBundle } from '../src/errors/upload/bundles';
import { findProject } from '../src/errors/upload/projects';
import { createRateLimits, type RateLimits } from '../src/pipeline/ratelimit';
import { ok, until } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';
import { tempDir } from './support/child';

// One artifact bundle asked to be assembled by several requests, in orders
// chosen rather than left to the scheduler: one request assembles it
// (assembleOnce called as the assemble endpoint calls it, with the rate
// limits on PostgreSQL) and is held at its claim, just before it reads the
// chunks, by a lock on the `rate_limits` table it spends its point in; the
// others ask the server meanwhile, as sentry-cli asks and polls. Under load in
// CI this order made the holder of the claim find its chunks gone (dropped at
// the end of a request that had answered `assembling`) and answer `not_found`.

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let project: { id: string; ref: number };
let caller: Caller;
let pool: pg.Pool;
let limits: RateLimits;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business' });
  project = ok('createErrorProject', await server.api(org.apiKey).post('/errors/projects', { name: 'Web', workspaceId: org.workspaceId, platform: 'javascript' }), 201);
  caller = await authenticate(server.db, `Bearer ${org.apiKey}`);
  pool = new pg.Pool({ connectionString: server.databaseUrl, max: 4 });
  limits = await createRateLimits(loadConfig({ DATABASE_URL: server.databaseUrl, DATA_DIR: tempDir('vigil-assembly-'), RATE_LIMIT_STORE: 'postgres' }), { pool });
}, 60_000);
afterAll(async () => {
  await limits?.close();
  await pool?.end();
  await server?.close();
});

/** A bundle of one map (its own debug id), posted as a chunk; answers what the assemble endpoint is asked with. */
async function postBundle(): Promise<{ checksum: string; debugId: string }> {
  const debugId = crypto.randomUUID();
  const bundle = Buffer.from(zipSync({
    'manifest.json': Buffer.from(JSON.stringify({ files: { 'files/_/_/a.js.map': { type: 'source_map', url: '~/a.js.map', headers: { 'debug-id': debugId } } } })),
    'files/_/_/a.js.map': Buffer.from(JSON.stringify({ version: 3, sources: ['a.ts'], names: [], mappings: 'AAAA', debug_id: debugId })),
  }));
  const checksum = crypto.createHash('sha1').update(bundle).digest('hex');
  const form = new FormData();
  form.append('file_gzip', new Blob([zlib.gzipSync(bundle)]), checksum);
  const r = await fetch(`${server.url}/api/0/organizations/any/chunk-upload/`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}` }, body: form });
  expect(r.status).toBe(200);
  return { checksum, debugId };
}

/** The assemble request, to the server. */
const ask = (checksum: string): Promise<Outcome> => fetch(`${server.url}/api/0/organizations/any/artifactbundle/assemble/`, {
  method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({ checksum, chunks: [checksum], projects: [String(project.ref)] }),
}).then((r) => r.json());

/**
 * assembleOnce as the endpoint runs it for `checksum`, started while
 * `rate_limits` is locked: it claims the file and then waits at its point,
 * before reading a chunk, until `release` is called.
 */
async function heldAtClaim(checksum: string): Promise<{ done: Promise<Outcome>; release(): Promise<void> }> {
  const lock = await pool.connect();
  await lock.query('begin');
  await lock.query('lock table rate_limits in share mode');
  const targets = [await findProject(server.db, caller, String(project.ref))];
  const target = JSON.stringify({ projects: [project.id], release: null, dist: null });
  const done = assembleOnce(server.db, limits, caller, { kind: 'bundle', checksum, chunks: [checksum], target }, 'sourcemaps',
    (file) => storeBundle(server.db, caller, file, targets, null));
  done.catch(() => undefined);
  await until('the claimer to wait at its point', async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
    where wait_event_type = 'Lock' and query ilike '%rate_limits%'`.execute(server.db)).rows[0].n === 1);
  let released = false;
  return {
    done,
    async release() {
      if (released) return;
      released = true;
      await lock.query('commit');
      lock.release();
    },
  };
}

const chunkHeld = async (checksum: string) => (await sql<{ n: number }>`select count(*)::int as n from error_upload_chunks
  where organization_id = ${org.organizationId} and checksum = ${checksum}`.execute(server.db)).rows[0].n === 1;
const storedMaps = (debugId: string) => server.db.selectFrom('error_sourcemaps').select('filename').where('debug_id', '=', debugId).execute();

test('requests answered "assembling" leave the chunks to the request holding the claim, which assembles the file', async () => {
  const { checksum, debugId } = await postBundle();
  const claimer = await heldAtClaim(checksum);
  try {
    // Asked and polled meanwhile: the file is being assembled, and its chunks stay for the claimer.
    expect(await ask(checksum)).toEqual({ state: 'assembling', missingChunks: [], detail: null });
    expect(await ask(checksum)).toEqual({ state: 'assembling', missingChunks: [], detail: null });
    expect(await chunkHeld(checksum)).toBe(true);
  } finally {
    await claimer.release();
  }
  expect(await claimer.done).toEqual({ state: 'ok', missingChunks: [], detail: null, result: { maps: 1 } });
  // Gone with the outcome that consumed them; the next asks get that outcome.
  expect(await chunkHeld(checksum)).toBe(false);
  expect(await ask(checksum)).toEqual({ state: 'ok', missingChunks: [], detail: null });
  expect(await storedMaps(debugId)).toEqual([{ filename: '~/a.js' }]);
});

test('a claim taken over as stale is settled by its new holder: the old one neither undoes the outcome nor asks for its chunks again', async () => {
  const { checksum, debugId } = await postBundle();
  const claimer = await heldAtClaim(checksum);
  try {
    // The claimer looks dead (its claim older than 5 minutes): another request takes the file over and assembles it.
    await sql`update error_upload_assemblies set created_at = now() - interval '6 minutes' where checksum = ${checksum}`.execute(server.db);
    expect(await ask(checksum)).toEqual({ state: 'ok', missingChunks: [], detail: null });
    expect(await chunkHeld(checksum)).toBe(false);
  } finally {
    await claimer.release();
  }
  // The old claimer finds the chunks consumed by the kept outcome: that outcome is its answer too.
  expect(await claimer.done).toEqual({ state: 'ok', missingChunks: [], detail: null, result: { maps: 1 } });
  expect(await ask(checksum)).toEqual({ state: 'ok', missingChunks: [], detail: null });
  expect(await storedMaps(debugId)).toEqual([{ filename: '~/a.js' }]);
});
