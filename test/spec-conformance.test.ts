/**
 * Sentences of the spec a review found the contract or the code at odds with:
 * values the spec clamps rather than refuses, the postmortem's own error code,
 * "any" state acknowledged, a revoked probe, and the pipeline's order for a
 * body that cannot be decoded.
 */
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
  test.each([[{}], [{ body: '' }], [{ body: ' \n\t ' }]])('%j is 400 postmortem_required', async (body) => {
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
