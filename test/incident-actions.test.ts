import { newId } from '../src/crypto/ids';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// PATCH /incidents/{id} (acknowledge, resolve, comment, publish) and
// PUT /incidents/{id}/postmortem, each part checked against its own permission.

let server: TestServer;
let owner: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let monitorId: string;

async function incident(status = 'open') {
  const id = newId('inc');
  await server.db.insertInto('incidents').values({
    id, organization_id: org.organizationId, workspace_id: org.workspaceId, monitor_id: monitorId, title: 'API is down',
    cause: 'timeout', severity: 'critical', status, started_at: new Date(Date.now() - 90_000),
  }).execute();
  return id;
}

async function scopedKey(scopes: string[]) {
  return server.api(ok('createApiKey', await owner.post('/api-keys', { name: scopes.join(' '), scopes }), 201).token);
}

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org();
  owner = server.api(org.apiKey);
  monitorId = ok('createMonitor', await owner.post('/monitors', { name: 'API', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: 'https://api.example.test' }) }), 201).id;
});
afterAll(() => server.close());

test('acknowledge sets acknowledgedAt and a timeline entry naming who', async () => {
  const id = await incident();
  const inc = ok('updateIncident', await owner.patch(`/incidents/${id}`, { status: 'acknowledged' }));
  expect(inc.status).toBe('acknowledged');
  expect(inc.acknowledgedAt).not.toBeNull();
  const events = ok('listIncidentEvents', await owner.get(`/incidents/${id}/events`));
  expect(events.at(-1)).toMatchObject({ kind: 'acknowledged', fromStatus: 'open', toStatus: 'acknowledged', actor: { type: 'api_key' } });
});

test('resolve sets resolvedAt and durationSeconds; ack and resolve together', async () => {
  const id = await incident();
  const inc = ok('updateIncident', await owner.patch(`/incidents/${id}`, { status: 'resolved', comment: 'Fixed the load balancer.' }));
  expect(inc.status).toBe('resolved');
  expect(inc.resolvedAt).not.toBeNull();
  expect(inc.durationSeconds).toBeGreaterThanOrEqual(89);
  const kinds = ok('listIncidentEvents', await owner.get(`/incidents/${id}/events`)).map((e: { kind: string }) => e.kind);
  expect(kinds).toEqual(['resolved', 'comment']);
});

test('each part needs its own permission; publish also needs status_page:manage', async () => {
  const id = await incident();
  const commenter = await scopedKey(['incident:read', 'incident:comment']);
  const ack = await commenter.patch(`/incidents/${id}`, { status: 'acknowledged' });
  expect(ack.status).toBe(403);
  expect(ack.body.vars.permission).toBe('incident:acknowledge');
  expect((await commenter.patch(`/incidents/${id}`, { status: 'resolved' })).body.vars.permission).toBe('incident:resolve');
  const pub = await commenter.patch(`/incidents/${id}`, { comment: 'Public note', publish: true });
  expect(pub.status).toBe(403);
  expect(pub.body.vars.permission).toBe('status_page:manage');
  ok('updateIncident', await commenter.patch(`/incidents/${id}`, { comment: 'Internal note' }));
  const publisher = await scopedKey(['incident:read', 'incident:comment', 'status_page:manage']);
  ok('updateIncident', await publisher.patch(`/incidents/${id}`, { comment: 'We are on it.', publish: true }));
  const comments = ok('listIncidentEvents', await owner.get(`/incidents/${id}/events`)).filter((e: { kind: string }) => e.kind === 'comment');
  expect(comments.map((c: { message: string; public: boolean }) => [c.message, c.public])).toEqual([['Internal note', false], ['We are on it.', true]]);
  const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
  expect((await viewer.patch(`/incidents/${id}`, { comment: 'x' })).status).toBe(403);
});

test('an empty change, publish alone and a blank comment are 400', async () => {
  const id = await incident();
  expect((await owner.patch(`/incidents/${id}`, {})).status).toBe(400);
  expect((await owner.patch(`/incidents/${id}`, { publish: true })).status).toBe(400);
  const blank = await owner.patch(`/incidents/${id}`, { comment: '   ' });
  expect(blank.status).toBe(400);
  expect(blank.body.details.field).toBe('comment');
  expect((await owner.patch(`/incidents/${id}`, { status: 'open' })).body.details.field).toBe('status');
});

test('postmortem: only for resolved incidents, 1 to 50,000 characters after trimming, replaced on each call', async () => {
  const id = await incident();
  const early = await owner.put(`/incidents/${id}/postmortem`, { body: '# Root cause' });
  expect(early.status).toBe(409);
  expect(early.body.code).toBe('incident_not_resolved');
  ok('updateIncident', await owner.patch(`/incidents/${id}`, { status: 'resolved' }));
  expect((await owner.put(`/incidents/${id}/postmortem`, { body: '  \n\t ' })).body.code).toBe('postmortem_required');
  const long = await owner.put(`/incidents/${id}/postmortem`, { body: `  ${'x'.repeat(50_001)}  ` });
  expect(long.status).toBe(400);
  expect(long.body.code).toBe('postmortem_too_long');
  ok('setIncidentPostmortem', await owner.put(`/incidents/${id}/postmortem`, { body: `  ${'y'.repeat(50_000)}  ` }));
  const inc = ok('setIncidentPostmortem', await owner.put(`/incidents/${id}/postmortem`, { body: '  # Root cause\n\nA <script>bad()</script> deploy.  ' }));
  expect(inc.postmortem).toMatchObject({ body: '# Root cause\n\nA <script>bad()</script> deploy.', authorName: expect.any(String) });
  expect(inc.hasPostmortem).toBe(true);
  expect(ok('listIncidents', await owner.get('/incidents')).find((i: { id: string }) => i.id === id).hasPostmortem).toBe(true);
  const resolver = await scopedKey(['incident:read', 'incident:comment']);
  expect((await resolver.put(`/incidents/${id}/postmortem`, { body: 'x' })).body.vars.permission).toBe('incident:resolve');
});

test("another organisation's incident is 404", async () => {
  const id = await incident();
  const other = server.api((await server.org()).apiKey);
  expect((await other.patch(`/incidents/${id}`, { status: 'resolved' })).status).toBe(404);
  expect((await other.put(`/incidents/${id}/postmortem`, { body: 'x' })).status).toBe(404);
});
