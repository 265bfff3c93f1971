/**
 * Sentences of the spec a review found the contract or the code at odds with:
 * values the spec clamps rather than refuses, the postmortem's own error code,
 * "any" state acknowledged, a revoked probe, and the pipeline's order for a
 * body that cannot be decoded.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { CreateWorkspaceRequestSchema } from '../gen/proto/vigil/v1/workspaces_pb';
import { newId } from '../src/crypto/ids';
import { createProbe, revokeProbe } from '../src/domain/probes';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

let server: TestServer;
let owner: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let monitorId: string;

const http = (extra: Record<string, unknown> = {}) => ({
  name: 'Site', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: 'https://example.com/' }), ...extra,
});

async function incident(status = 'open') {
  const id = newId('inc');
  await server.db.insertInto('incidents').values({
    id, organization_id: org.organizationId, workspace_id: org.workspaceId, monitor_id: monitorId, title: 'Site is down',
    cause: 'timeout', severity: 'critical', status, started_at: new Date(Date.now() - 60_000),
    ...(status === 'resolved' ? { resolved_at: new Date() } : {}),
  }).execute();
  return id;
}

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'free' });
  owner = server.api(org.apiKey);
  monitorId = ok('createMonitor', await owner.post('/monitors', http()), 201).id;
});
afterAll(() => server.close());

describe('monitor interval: clamped, not refused', () => {
  test.each([[0], [-30], [1]])('%i on create and update is the plan floor', async (asked) => {
    const floor = ok('getMonitor', await owner.get(`/monitors/${monitorId}`)).intervalSeconds as number;
    expect(floor).toBeGreaterThan(1); // the free plan's floor (the default 300 is above it or equal)
    const created = await owner.post('/monitors', http({ intervalSeconds: asked }));
    const m = ok('createMonitor', created, 201);
    expect(m.intervalSeconds).toBeGreaterThanOrEqual(60);
    const patched = ok('updateMonitor', await owner.patch(`/monitors/${m.id}`, { intervalSeconds: asked }));
    expect(patched.intervalSeconds).toBe(m.intervalSeconds);
    await owner.delete(`/monitors/${m.id}`);
  });

  test('above 30 days is 30 days', async () => {
    const m = ok('createMonitor', await owner.post('/monitors', http({ intervalSeconds: 10_000_000 })), 201);
    expect(m.intervalSeconds).toBe(2_592_000);
    await owner.delete(`/monitors/${m.id}`);
  });
});

describe('query values the spec clamps', () => {
  test('graph hours, history days, incident and audit limits below 1 are 1', async () => {
    expect(ok('getMonitorGraph', await owner.get(`/monitors/${monitorId}/graph?hours=0`)).hours).toBe(1);
    expect(ok('getMonitorGraph', await owner.get(`/monitors/${monitorId}/graph?hours=9999`)).hours).toBe(168);
    expect(ok('getMonitorHistory', await owner.get(`/monitors/${monitorId}/history?days=-3`)).days).toHaveLength(1);
    await incident();
    await incident();
    expect(ok('listIncidents', await owner.get('/incidents?limit=0'))).toHaveLength(1);
    expect(ok('listIncidents', await owner.get('/incidents?limit=5000')).length).toBeGreaterThanOrEqual(2);
  });

  test('audit limit 0 is 1 (Business plan)', async () => {
    const biz = await server.org({ plan: 'business' });
    const api = server.api(biz.apiKey);
    await api.post('/workspaces', { name: 'One' });
    await api.post('/workspaces', { name: 'Two' });
    expect(ok('listAuditEntries', await api.get('/audit?limit=0'))).toHaveLength(1);
  });
});

describe('postmortem', () => {
  test.each([[{}], [{ body: null }], [{ body: '' }], [{ body: ' \n\t ' }]])('%j is 400 postmortem_required', async (body) => {
    const id = await incident('resolved');
    const res = await owner.put(`/incidents/${id}/postmortem`, body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'postmortem_required', details: { field: 'body' } });
  });
});

describe('acknowledging from any state', () => {
  test('a resolved incident becomes acknowledged (unresolved again); the first acknowledgement time is kept', async () => {
    const id = await incident('resolved');
    const inc = ok('updateIncident', await owner.patch(`/incidents/${id}`, { status: 'acknowledged' }));
    expect(inc).toMatchObject({ status: 'acknowledged', resolvedAt: null, durationSeconds: null });
    expect(inc.acknowledgedAt).not.toBeNull();
    const resolved = ok('updateIncident', await owner.patch(`/incidents/${id}`, { status: 'resolved' }));
    expect(resolved.status).toBe('resolved');
    const again = ok('updateIncident', await owner.patch(`/incidents/${id}`, { status: 'acknowledged' }));
    expect(again).toMatchObject({ status: 'acknowledged', acknowledgedAt: inc.acknowledgedAt });
  });

  test('a suppressed incident becomes acknowledged', async () => {
    const id = await incident('suppressed');
    expect(ok('updateIncident', await owner.patch(`/incidents/${id}`, { status: 'acknowledged' })).status).toBe('acknowledged');
  });
});

test('a revoked probe is 400 on probeId; an unknown one 404', async () => {
  const { probeId } = await createProbe(server.db, org.organizationId, 'office');
  await revokeProbe(server.db, probeId);
  const revoked = await owner.post('/monitors', http({ probeId }));
  expect(revoked.status).toBe(400);
  expect(revoked.body.details.field).toBe('probeId');
  const unknown = await owner.post('/monitors', http({ probeId: 'prb_nope' }));
  expect(unknown.status).toBe(404);
});

describe('a body that cannot be decoded is judged after the key and the permission', () => {
  test('no key: 401, not 400', async () => {
    const res = await server.api(null).post('/monitors', '{"name": ', { 'content-type': 'application/json' });
    expect(res.status).toBe(401);
  });

  test('a viewer: 403 naming monitor:create, not 400', async () => {
    const viewer = await server.member(org.organizationId, 'viewer');
    const res = await server.api(viewer.apiKey).post('/monitors', '{"name": ', { 'content-type': 'application/json' });
    expect(res.status).toBe(403);
    expect(res.body.vars.permission).toBe('monitor:create');
  });

  test('with the permission: 400 invalid_json', async () => {
    const res = await owner.post('/monitors', '{"name": ', { 'content-type': 'application/json' });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_json' } });
  });
});

describe('NUL characters (PostgreSQL text cannot hold them)', () => {
  test('in a path id: 404 like any unknown id', async () => {
    for (const path of ['/monitors/%00', '/workspaces/ws%00x', '/incidents/%00']) {
      const res = await owner.get(path);
      expect(res).toMatchObject({ status: 404, body: { code: 'not_found' } });
    }
    expect((await owner.request('PATCH', '/workspaces/%00', { name: 'x' })).status).toBe(404);
  });

  test('in a body or query value: 400 naming the field', async () => {
    const ws = await owner.post('/workspaces', { name: 'a\u0000b' });
    expect(ws).toMatchObject({ status: 400, body: { details: { field: 'name' } } });
    const key = await owner.post('/api-keys', { name: 'k', scopes: ['monitor:read\u0000'] });
    expect(key).toMatchObject({ status: 400, body: { details: { field: 'scopes.0' } } });
    expect(await owner.get('/monitors?tag=%00')).toMatchObject({ status: 400, body: { details: { field: 'tag' } } });
    expect((await owner.delete('/api-keys?id=%00')).status).toBe(400);
  });
});

describe('content negotiation', () => {
  const raw = (path: string, init: RequestInit) => fetch(`${server.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${org.apiKey}`, ...(init.headers as Record<string, string>) } });

  test('a protobuf request is answered in protobuf even when Accept names JSON (a client default)', async () => {
    const body = toBinary(CreateWorkspaceRequestSchema, create(CreateWorkspaceRequestSchema, { name: 'Negotiated' }));
    const res = await raw('/workspaces', { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf', accept: 'application/json, text/plain, */*' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/x-protobuf');
  });

  test('q-values count: protobuf at q=0 or below JSON is not asked for; gzip at q=0 is not sent', async () => {
    for (const accept of ['application/x-protobuf;q=0, application/json', 'application/json;q=0.9, application/x-protobuf;q=0.1']) {
      const res = await raw('/me', { headers: { accept } });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
    expect((await raw('/me', { headers: { accept: 'application/json;q=0.5, application/x-protobuf' } })).headers.get('content-type')).toBe('application/x-protobuf');
    const plain = await raw('/me', { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    const zipped = await raw('/me', { headers: { 'accept-encoding': 'br;q=1, gzip;q=0.5' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
  });
});

test('NUL in the tokens of the routes outside /api/v1 is never a 500', async () => {
  for (const path of ['/ping/%00', '/ping/a%00b/fail', '/feeds/incidents/%00/feed.xml', '/confirm/%00', '/api/proto/%00']) {
    const res = await fetch(`${server.url}${path}`);
    expect([400, 404]).toContain(res.status);
  }
  const probe = await fetch(`${server.url}/probe/v1/work`, { method: 'POST', headers: { authorization: 'Bearer pr_%00' } });
  expect(probe.status).toBeLessThan(500);
});

test('deleting a monitor others depend on: their outages stand on their own, and nothing depends on it any more', async () => {
  const parent = ok('createMonitor', await owner.post('/monitors', http({ name: 'Parent' })), 201).id;
  const child = ok('createMonitor', await owner.post('/monitors', http({ name: 'Child', dependsOn: [parent] })), 201).id;
  const rootId = newId('inc');
  const blastId = newId('inc');
  const base = { organization_id: org.organizationId, workspace_id: org.workspaceId, cause: 'timeout', severity: 'critical', started_at: new Date() };
  await server.db.insertInto('incidents').values([
    { ...base, id: rootId, monitor_id: parent, title: 'Parent is down', status: 'open' },
    { ...base, id: blastId, monitor_id: child, title: 'Child is down', status: 'suppressed', root_incident_id: rootId },
  ]).execute();
  const before = ok('getSummary', await owner.get('/summary'));
  ok('deleteMonitor', await owner.delete(`/monitors/${parent}`));
  expect(ok('getIncident', await owner.get(`/incidents/${blastId}`))).toMatchObject({ status: 'open', rootIncidentId: null });
  expect(ok('getMonitor', await owner.get(`/monitors/${child}`)).dependsOn).toEqual([]);
  const after = ok('getSummary', await owner.get('/summary'));
  expect(after.suppressedIncidents).toBe(before.suppressedIncidents - 1);
  expect(after.openIncidents).toBe(before.openIncidents); // the parent's went, the child's now counts
  const events = ok('listIncidentEvents', await owner.get(`/incidents/${blastId}/events`));
  expect(events.at(-1)).toMatchObject({ kind: 'status_changed', fromStatus: 'suppressed', toStatus: 'open' });
});

describe('input no route could take', () => {
  test('a body nested absurdly deep is 400, not a crash of the stack', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const res = await owner.post('/workspaces', deep, { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    const obj = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    expect((await owner.post('/hosts', obj, { 'content-type': 'application/json' })).status).toBe(400);
  });

  test('a lone surrogate in a value is 400 naming the field', async () => {
    const res = await owner.post('/api-keys', '{"name":"key \\ud800 one"}', { 'content-type': 'application/json' });
    expect(res).toMatchObject({ status: 400, body: { details: { field: 'name' } } });
    // Percent-encoded bytes that are not UTF-8 cannot even be decoded: 400 with the error body.
    expect(await owner.get('/monitors/mon_%ED%A0%80')).toMatchObject({ status: 400, body: { code: expect.any(String) } });
    expect((await owner.get(`/monitors/${encodeURIComponent('mon_é')}`)).status).toBe(404);
  });

  test("what Node's HTTP parser refuses still gets the error body and the common headers", async () => {
    const net = await import('node:net');
    const { port } = new URL(server.url);
    for (const head of ['FUZZ /api/v1/ HTTP/1.1', 'GET /api/v1/channels/\u00f1 HTTP/1.1']) {
      const reply = await new Promise<string>((resolve, reject) => {
        const s = net.connect(Number(port), '127.0.0.1', () => s.end(Buffer.from(`${head}\r\nHost: x\r\n\r\n`, 'latin1')));
        let data = '';
        s.on('data', (d) => { data += d.toString('utf8'); });
        s.on('end', () => resolve(data));
        s.on('error', reject);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(reply).toMatch(/\r\nVary: Accept, Content-Type\r\n/);
      expect(reply).toMatch(/\r\nCache-Control: private, no-store\r\n/);
      expect(JSON.parse(reply.split('\r\n\r\n')[1])).toMatchObject({ code: 'bad_request', vars: {}, details: null });
    }
  });
});

test('long lists: over 10,000 items is 400; repeated ids are looked up once; an error names a few fields, not thousands', async () => {
  const huge = await owner.post('/maintenance', {
    title: 't', workspaceId: org.workspaceId, monitorIds: Array(100_000).fill(monitorId),
    startsAt: new Date(Date.now() + 3_600_000).toISOString(), endsAt: new Date(Date.now() + 7_200_000).toISOString(),
  });
  expect(huge).toMatchObject({ status: 400, body: { details: { field: 'monitorIds' } } });
  const many = await owner.post('/maintenance', {
    title: 't', workspaceId: org.workspaceId, monitorIds: Array(9_000).fill(monitorId),
    startsAt: new Date(Date.now() + 3_600_000).toISOString(), endsAt: new Date(Date.now() + 7_200_000).toISOString(),
  });
  expect(many.status).toBe(201);
  expect(many.body.data.monitorIds).toEqual([monitorId]);
  const policy = await owner.post('/on-call/escalation-policies', { name: 'p', steps: Array(5_000).fill('s') });
  expect(policy.status).toBe(400);
  expect(policy.body.details.fields.length).toBeLessThanOrEqual(20);
});
