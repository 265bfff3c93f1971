import { setPassword } from '../src/domain/organizations';
import { createVigilClient, ok, VigilApiError } from '../clients/typescript/src/index';
import { startTestServer, type TestServer } from './support/harness';

// The TypeScript client package (clients/typescript) against a real server:
// typed reads and writes by API key and by session token, the contract's
// error shape as a VigilApiError with the field at fault, and a 429 on a
// read: "rate limited until" observable, a GET retried after Retry-After,
// a write never retried.

/** The VigilApiError a call must fail with. */
async function failure(call: Promise<unknown>): Promise<VigilApiError> {
  const e = await call.then(() => new Error('the call succeeded'), (x: unknown) => x);
  expect(e).toBeInstanceOf(VigilApiError);
  return e as VigilApiError;
}

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '4', RATE_LIMIT_WRITE: '3' });
  org = await server.org({ plan: 'enterprise' });
}, 60_000);
afterAll(async () => { await server?.close(); });

test('by API key: a typed create and read; a bad config is a VigilApiError naming the field', async () => {
  const other = await server.org({ plan: 'enterprise' });
  const vigil = createVigilClient({ baseUrl: server.url, token: other.apiKey });
  const created = await ok(vigil.api.POST('/monitors', {
    body: { name: 'Typed', kind: 'http', workspaceId: other.workspaceId, config: JSON.stringify({ url: 'http://127.0.0.1:9/' }), intervalSeconds: 3600 },
  }));
  expect(created.data).toMatchObject({ name: 'Typed', kind: 'http', status: 'pending' });
  const read = await ok(vigil.api.GET('/monitors/{id}', { params: { path: { id: created.data.id } } }));
  expect(read.data.id).toBe(created.data.id);

  const e = await failure(ok(vigil.api.POST('/monitors', {
    body: { name: 'Bad', kind: 'http', workspaceId: other.workspaceId, config: JSON.stringify({ url: 'ftp://x' }) },
  })));
  expect({ status: e.status, code: e.code, field: e.details?.field }).toEqual({ status: 400, code: 'invalid_config', field: 'config.url' });
  expect(e.fieldReason('config.url')).toEqual(expect.any(String));
  expect(e.message.length).toBeGreaterThan(0);

  const missing = await failure(ok(vigil.api.GET('/incidents/{id}', { params: { path: { id: 'inc_nope' } } })));
  expect({ status: missing.status, code: missing.code }).toEqual({ status: 404, code: 'not_found' });
});

test('by session token: sign in, /me lists the organisations, sign out ends it', async () => {
  const other = await server.org({ plan: 'enterprise' });
  const owner = await server.db.selectFrom('users').innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select('users.email').where('memberships.organization_id', '=', other.organizationId).executeTakeFirstOrThrow();
  await setPassword(server.db, owner.email, 'client test password 1');
  const anonymous = createVigilClient({ baseUrl: server.url });
  const wrong = await failure(ok(anonymous.api.POST('/sessions', { body: { email: owner.email, password: 'nope nope nope' } })));
  expect(wrong.code).toBe('sign_in_failed');
  const session = await ok(anonymous.api.POST('/sessions', { body: { email: owner.email, password: 'client test password 1' } }));
  const vigil = createVigilClient({ baseUrl: server.url, token: session.data.token });
  const me = await ok(vigil.api.GET('/me'));
  expect(me.data.organization.id).toBe(other.organizationId);
  expect(me.data.organizations?.map((o) => o.active)).toEqual([true]);
  await ok(vigil.api.DELETE('/sessions/{id}', { params: { path: { id: 'current' } } }));
  const after = await failure(ok(vigil.api.GET('/me')));
  expect(after.status).toBe(401);
});

test('429 on reads: observable "limited until", a failing call when the wait is too long, a GET retried after Retry-After', async () => {
  const vigil = createVigilClient({ baseUrl: server.url, token: org.apiKey, maxRetryWaitSeconds: 0 });
  const changes: Array<number | null> = [];
  vigil.rateLimit.subscribe(() => changes.push(vigil.rateLimit.until));
  // RATE_LIMIT_READ is 4 a minute: the fifth read of the window is refused.
  for (let i = 0; i < 4; i++) await ok(vigil.api.GET('/summary'));
  const refused = await failure(ok(vigil.api.GET('/summary')));
  expect({ status: refused.status, code: refused.code }).toEqual({ status: 429, code: 'rate_limited' });
  expect(refused.retryAfterSeconds).toBeGreaterThan(0);
  expect(vigil.rateLimit.until).toBeGreaterThan(Date.now());
  expect(vigil.rateLimit.bucket).toBe('R');
  expect(changes.length).toBe(1);
  // A write is never retried: it fails at once, even for a patient client.
  const writer = createVigilClient({ baseUrl: server.url, token: org.apiKey });
  for (let i = 0; i < 3; i++) await ok(writer.api.DELETE('/setup'));
  const started = Date.now();
  const writeRefused = await failure(ok(writer.api.DELETE('/setup')));
  expect({ status: writeRefused.status, bucket: writeRefused.vars.bucket }).toEqual({ status: 429, bucket: 'W' });
  expect(Date.now() - started).toBeLessThan(2000);

  // A patient client waits Retry-After (under a minute: the window is a minute) and gets its answer.
  const patient = createVigilClient({ baseUrl: server.url, token: org.apiKey });
  const waited = Date.now();
  const summary = await ok(patient.api.GET('/summary'));
  expect(summary.data.total).toBeGreaterThanOrEqual(0);
  expect(Date.now() - waited).toBeGreaterThanOrEqual(900);
  expect(patient.rateLimit.until).toBeNull();
}, 120_000);
