import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// Grouping and issues: a thousand events of one error are one issue with
// timesSeen 1000; grouping by in-app frames, custom fingerprints (with
// {{ default }}), type + value, stripped messages; the 24-hour spark; the
// latest event's chain; status per the spec's table (resolved in a release,
// older releases do not reopen, newer and release-less do; ignore with
// ignoreHours; unresolved reopens).

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;

async function project(name: string) {
  return ok('createErrorProject', await api.post('/errors/projects', { name, workspaceId: org.workspaceId }), 201) as { id: string; ref: number; publicKey: string };
}

async function send(p: { ref: number; publicKey: string }, events: Record<string, unknown>[]) {
  const body = ['{}', ...events.flatMap((e) => ['{"type":"event"}', JSON.stringify({ platform: 'node', ...e })])].join('\n');
  const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body });
  expect(res.status).toBe(200);
}

const frame = (fn: string, line: number, inApp = true) => ({ filename: '/app/src/checkout.js', module: 'checkout', function: fn, lineno: line, colno: 3, in_app: inApp, context_line: `  ${fn}();` });
const thrown = (type: string, value: string, fns = ['handler', 'charge']) => ({
  exception: { values: [{ type, value, mechanism: { type: 'generic', handled: true }, stacktrace: { frames: [frame('node:internal', 1, false), ...fns.map((f, i) => frame(f, 10 + i))] } }] },
});

async function issues(projectId: string, status = 'all') {
  return ok('listErrorIssues', await api.get(`/errors/issues?project=${projectId}&status=${status}`)) as any[];
}
async function grouped(projectId: string, events: number) {
  await until(`${events} events grouped`, async () => (await issues(projectId)).reduce((a, i) => a + i.timesSeen, 0) >= events, 20_000);
}

beforeAll(async () => {
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
});
afterAll(async () => { await server.close(); });

test('a thousand events of one error are one issue with timesSeen 1000, its spark and users', async () => {
  const p = await project('Busy');
  for (let i = 0; i < 10; i++) {
    await send(p, Array.from({ length: 100 }, (_, j) => ({ ...thrown('TypeError', `cannot read property of undefined (order ${i * 100 + j})`), user: { id: `u${j % 7}` }, release: 'shop@1.0.0' })));
  }
  await grouped(p.id, 1000);
  const [issue] = await issues(p.id, 'unresolved');
  expect(issue).toMatchObject({ timesSeen: 1000, usersSeen: 7, type: 'TypeError', status: 'unresolved', title: expect.stringMatching(/^TypeError: cannot read property/), culprit: 'charge (checkout)', firstRelease: 'shop@1.0.0', lastRelease: 'shop@1.0.0' });
  expect(issue.spark).toHaveLength(24);
  // All in the current hour (or the two last, when the test runs across an hour's turn).
  expect(issue.spark[22] + issue.spark[23]).toBe(1000);
  expect(issue.spark.slice(0, 22).every((n: number) => n === 0)).toBe(true);
  expect(ok('listErrorProjects', await api.get('/errors/projects')).find((x: any) => x.id === p.id)).toMatchObject({ unresolved: 1, eventsLast24h: 1000 });
});

test('grouping: frames (in-app only), custom fingerprints with {{ default }}, type + value without frames, stripped messages', async () => {
  const p = await project('Grouping');
  await send(p, [
    thrown('Error', 'a'), thrown('Error', 'b'), // same in-app frames: one issue
    thrown('Error', 'a', ['handler', 'refund']), // another throw site: another issue
    { ...thrown('Error', 'a'), fingerprint: ['{{ default }}', 'tenant-1'] }, // split by a custom fingerprint
    { exception: { values: [{ type: 'RangeError', value: 'x' }] } }, { exception: { values: [{ type: 'RangeError', value: 'x' }] } },
    { exception: { values: [{ type: 'RangeError', value: 'y' }] } },
    { message: 'User 42 not found in 3 ms', level: 'warning' }, { message: 'User 43 not found in 5 ms', level: 'warning' },
    { fingerprint: ['payments-down'], message: 'one' }, { fingerprint: ['payments-down'], message: 'two' },
  ]);
  await grouped(p.id, 11);
  const all = await issues(p.id);
  const times = all.map((i) => i.timesSeen).sort((a, b) => a - b);
  expect(times).toEqual([1, 1, 1, 2, 2, 2, 2]);
  expect(all.find((i) => i.title === 'User 43 not found in 5 ms')).toMatchObject({ timesSeen: 2, level: 'warning', type: null });
  // Search over type, value and culprit.
  const ranges = ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}&q=rangeerror`));
  expect(ranges).toHaveLength(2);
  expect((await api.get('/errors/issues?status=gone')).status).toBe(400);
  expect(ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}&limit=2&status=all`))).toHaveLength(2);
  // `limit` has a maximum of 200, like the other maxima of the Limits table: clamped, not refused.
  expect(ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}&limit=500&status=all`))).toHaveLength(7);
  expect(ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}&limit=0&status=all`))).toHaveLength(1);
});

test('one issue: the latest event\'s chain (causes first), its release, environment, tags and user', async () => {
  const p = await project('Detail');
  await send(p, [{
    event_id: 'b'.repeat(32), release: 'app@2.0.0', environment: 'staging', timestamp: 1795296229.368, tags: { feature: 'checkout' }, user: { id: 'u1', email: 'a@b.c' },
    exception: { values: [
      { type: 'TypeError', value: 'low-level failure', mechanism: { type: 'chained', source: 'cause', exception_id: 1, parent_id: 0 }, stacktrace: { frames: [frame('inner', 11)] } },
      { type: 'Error', value: 'high-level failure', mechanism: { type: 'generic', exception_id: 0 }, stacktrace: { frames: [frame('outer', 15)] } },
    ] },
  }]);
  await grouped(p.id, 1);
  const [i] = await issues(p.id);
  const detail = ok('getErrorIssue', await api.get(`/errors/issues/${i.id}`));
  expect(detail).toMatchObject({ title: 'Error: high-level failure', type: 'Error', value: 'high-level failure' });
  expect(detail.exceptions.map((x: any) => [x.type, x.mechanism])).toEqual([['TypeError', 'chained'], ['Error', 'generic']]);
  expect(detail.exceptions[0].frames[0]).toMatchObject({ function: 'inner', lineno: 11, colno: 3, inApp: true, contextLine: '  inner();', resolved: false });
  expect(detail.lastEvent).toMatchObject({ eventId: 'b'.repeat(32), release: 'app@2.0.0', environment: 'staging', platform: 'node', tags: { feature: 'checkout' }, user: { id: 'u1', email: 'a@b.c' }, occurredAt: '2026-11-21T21:23:49.368Z' });
  expect((await api.get('/errors/issues/iss_nope')).status).toBe(404);
});

test('lastEvent carries the contexts and the request the SDK sent, without cookies, credentials or credential-like query parameters', async () => {
  const p = await project('Request');
  await send(p, [{
    ...thrown('Error', 'request failed'),
    contexts: {
      os: { name: 'Linux', version: '6.1' }, runtime: { name: 'node', version: 'v20.11.0' }, trace: { trace_id: 'c'.repeat(32), span_id: 'd'.repeat(16) },
      app: { build: '42', api_token: 'tok-secret-1', nested: { password: 'pw-secret-2', region: 'eu' } },
    },
    request: {
      url: 'https://alice:pw-secret-3@shop.example/cart?item=7&access_token=tok-secret-4#id_token=tok-secret-5',
      method: 'POST', query_string: 'item=7&api_key=key-secret-6&code=code-secret-7&page=2',
      headers: [['Content-Type', 'application/json'], ['Cookie', 'sid=cookie-secret-8'], ['Authorization', 'Bearer tok-secret-9'], ['X-Api-Key', 'key-secret-10'],
        ['X-Forwarded-For', '203.0.113.9'], ['X-Custom', 'Basic c2VjcmV0'], ['User-Agent', 'curl/8']],
      cookies: { sid: 'cookie-secret-11' }, data: { password: 'pw-secret-12' }, env: { REMOTE_ADDR: '203.0.113.9', SECRET_KEY: 'env-secret-13' },
    },
  }]);
  await grouped(p.id, 1);
  const [i] = await issues(p.id);
  const read = await api.get(`/errors/issues/${i.id}`);
  const detail = ok('getErrorIssue', read);
  expect(detail.lastEvent.contexts).toEqual({
    os: { name: 'Linux', version: '6.1' }, runtime: { name: 'node', version: 'v20.11.0' }, trace: { trace_id: 'c'.repeat(32), span_id: 'd'.repeat(16) },
    app: { build: '42', nested: { region: 'eu' } },
  });
  expect(detail.lastEvent.request).toEqual({
    url: 'https://shop.example/cart?item=7', method: 'POST', queryString: 'item=7&page=2',
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '203.0.113.9', 'User-Agent': 'curl/8' },
  });
  expect(JSON.stringify(read.body)).not.toMatch(/secret/);
  // The same through protobuf-shaped JSON (Connect): the request's headers are a map there.
  const rpc = await fetch(`${server.url}/rpc/vigil.v1.ErrorTrackingService/GetErrorIssue`, {
    method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: i.id }),
  });
  expect(rpc.status).toBe(200);
  const viaConnect = await rpc.json();
  expect(viaConnect.data.lastEvent.request.queryString).toBe('item=7&page=2');
  expect(viaConnect.data.lastEvent.contexts.app).toEqual({ build: '42', nested: { region: 'eu' } });
  // An event without them: both null.
  const q = await project('No request');
  await send(q, [thrown('Error', 'plain')]);
  await grouped(q.id, 1);
  const [j] = await issues(q.id);
  expect(ok('getErrorIssue', await api.get(`/errors/issues/${j.id}`)).lastEvent).toMatchObject({ contexts: null, request: null });
});

test('status: resolved in a release; an older release does not reopen, a newer one and a release-less event do; ignore and reopen', async () => {
  const p = await project('Releases');
  await send(p, [{ ...thrown('Error', 'boom'), release: 'web@1.4.0+7' }]);
  await grouped(p.id, 1);
  const [i] = await issues(p.id);
  expect(ok('updateErrorIssue', await api.patch(`/errors/issues/${i.id}`, { status: 'resolved' }))).toEqual({ id: i.id, status: 'resolved', resolvedInRelease: 'web@1.4.0+7', ignoredUntil: null });
  await send(p, [{ ...thrown('Error', 'boom'), release: 'web@1.3.9' }]);
  await grouped(p.id, 2);
  expect((await issues(p.id))[0].status).toBe('resolved');
  await send(p, [{ ...thrown('Error', 'boom'), release: 'web@1.4.0+8' }]);
  await grouped(p.id, 3);
  expect((await issues(p.id))[0]).toMatchObject({ status: 'unresolved', resolvedInRelease: null, lastRelease: 'web@1.4.0+8' });

  ok('updateErrorIssue', await api.patch(`/errors/issues/${i.id}`, { status: 'resolved' }));
  await send(p, [thrown('Error', 'boom')]);
  await grouped(p.id, 4);
  expect((await issues(p.id))[0].status).toBe('unresolved');

  const ignored = ok('updateErrorIssue', await api.patch(`/errors/issues/${i.id}`, { status: 'ignored', ignoreHours: 2 }));
  expect(ignored.status).toBe('ignored');
  expect(new Date(ignored.ignoredUntil).getTime() - Date.now()).toBeGreaterThan(7_100_000);
  expect(await issues(p.id, 'unresolved')).toEqual([]);
  expect((await issues(p.id, 'ignored'))).toHaveLength(1);
  // The ignore runs out: unresolved again.
  await server.db.updateTable('error_issues').set({ ignored_until: new Date(Date.now() - 1000) }).where('id', '=', i.id).execute();
  expect((await issues(p.id, 'unresolved'))[0]).toMatchObject({ status: 'unresolved', ignoredUntil: null });
  expect((await api.patch(`/errors/issues/${i.id}`, { status: 'ignored', ignoreHours: 2161 })).status).toBe(400);
  expect((await api.patch(`/errors/issues/${i.id}`, { status: 'resolved', ignoreHours: 2 })).status).toBe(400);
  ok('updateErrorIssue', await api.patch(`/errors/issues/${i.id}`, { status: 'ignored' }));
  expect(ok('updateErrorIssue', await api.patch(`/errors/issues/${i.id}`, { status: 'unresolved' }))).toEqual({ id: i.id, status: 'unresolved', resolvedInRelease: null, ignoredUntil: null });
  // Non-semver releases compare by the order they were first seen.
  await send(p, [{ ...thrown('Error', 'named'), release: 'blue-lion' }]);
  await grouped(p.id, 5);
  const named = (await issues(p.id)).find((x) => x.value === 'named');
  ok('updateErrorIssue', await api.patch(`/errors/issues/${named.id}`, { status: 'resolved' }));
  await send(p, [{ ...thrown('Error', 'named'), release: 'red-panda' }]);
  await grouped(p.id, 6);
  expect((await issues(p.id)).find((x) => x.value === 'named').status).toBe('unresolved');
});

test('confined keys see their workspaces\' issues only; viewers cannot change them', async () => {
  const p = await project('Scoped');
  await send(p, [thrown('Error', 'scoped')]);
  await grouped(p.id, 1);
  const other = ok('createWorkspace', await api.post('/workspaces', { name: 'Elsewhere' }), 201);
  const confined = server.api((await server.member(org.organizationId, 'admin', [other.id])).apiKey);
  expect(ok('listErrorIssues', await confined.get('/errors/issues?status=all'))).toEqual([]);
  const [i] = await issues(p.id);
  expect((await confined.get(`/errors/issues/${i.id}`)).status).toBe(404);
  const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
  expect((await viewer.patch(`/errors/issues/${i.id}`, { status: 'resolved' })).status).toBe(403);
});

test('NUL escapes in an event\'s strings (which PostgreSQL text cannot hold) neither lose it nor stall grouping', async () => {
  const p = await project('Nul');
  await send(p, [
    { ...thrown('Type\u0000Error', 'bad \u0000 value'), release: 'shop@1.0\u0000', environment: 'prod\u0000', user: { id: 'u\u00001' } },
    { ...thrown('RangeError', 'fine') },
  ]);
  await grouped(p.id, 2);
  const list = await issues(p.id);
  expect(list.map((i: any) => [i.type, i.value, i.lastRelease]).sort()).toEqual([['RangeError', 'fine', null], ['TypeError', 'bad  value', 'shop@1.0']]);
});
