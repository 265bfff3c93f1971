/**
 * Overview reads: GET /summary, GET and DELETE /setup, GET /me and the route
 * index GET /api/v1.
 */
import { randomBytes } from 'node:crypto';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { routes } from '../gen/routes';

let srv: TestServer;

const newMonitor = async (api: ApiClient, workspaceId: string, name = 'm') =>
  ok('createMonitor', await api.post('/monitors', { name, kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://a.example' }) }), 201).id as string;

const rid = (p: string) => `${p}_${randomBytes(8).toString('hex')}`;

async function incident(organizationId: string, workspaceId: string, status: string, rootIncidentId: string | null = null) {
  const id = rid('inc');
  await srv.db.insertInto('incidents').values({
    id, organization_id: organizationId, workspace_id: workspaceId, monitor_id: null, title: `${status} incident`,
    cause: 'timeout', severity: 'critical', status, root_incident_id: rootIncidentId,
  }).execute();
  return id;
}

beforeAll(async () => {
  const env = { PORT: '0', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' };
  srv = await startTestServer(env);
});
afterAll(() => srv.close());

describe('GET /summary', () => {
  it('counts monitors by status and unresolved incidents, blast radius counted as suppressed', async () => {
    const o = await srv.org();
    const api = srv.api(o.apiKey);
    const zero = { total: 0, up: 0, degraded: 0, down: 0, paused: 0, pending: 0, openIncidents: 0, suppressedIncidents: 0 };
    expect(ok('getSummary', await api.get('/summary'))).toEqual(zero);

    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await newMonitor(api, o.workspaceId, `m${i}`));
    const setStatus = (id: string, status: string) => srv.db.updateTable('monitors').set({ status }).where('id', '=', id).execute();
    await setStatus(ids[0], 'up');
    await setStatus(ids[1], 'up');
    await setStatus(ids[2], 'down');
    await setStatus(ids[3], 'degraded');
    ok('updateMonitor', await api.patch(`/monitors/${ids[4]}`, { paused: true }));

    const root = await incident(o.organizationId, o.workspaceId, 'open');
    await incident(o.organizationId, o.workspaceId, 'acknowledged');
    await incident(o.organizationId, o.workspaceId, 'open', root);
    await incident(o.organizationId, o.workspaceId, 'acknowledged', root);
    await incident(o.organizationId, o.workspaceId, 'suppressed');
    await incident(o.organizationId, o.workspaceId, 'resolved');
    await incident(o.organizationId, o.workspaceId, 'resolved', root);
    // Another organisation's incidents never count.
    const other = await srv.org();
    await incident(other.organizationId, other.workspaceId, 'open');
    await incident(other.organizationId, other.workspaceId, 'suppressed');

    expect(ok('getSummary', await api.get('/summary'))).toEqual({
      total: 6, up: 2, degraded: 1, down: 1, paused: 1, pending: 1, openIncidents: 2, suppressedIncidents: 3,
    });
  });

  it('a confined key counts only its workspaces', async () => {
    const o = await srv.org();
    const owner = srv.api(o.apiKey);
    const wsB = ok('createWorkspace', await owner.post('/workspaces', { name: 'B' }), 201).id;
    await newMonitor(owner, o.workspaceId);
    await newMonitor(owner, wsB);
    await newMonitor(owner, wsB);
    await incident(o.organizationId, o.workspaceId, 'open');
    await incident(o.organizationId, wsB, 'suppressed');
    const confined = srv.api((await srv.member(o.organizationId, 'viewer', [wsB])).apiKey);
    expect(ok('getSummary', await confined.get('/summary'))).toMatchObject({ total: 2, pending: 2, openIncidents: 0, suppressedIncidents: 1 });
    expect(ok('getSummary', await owner.get('/summary'))).toMatchObject({ total: 3, pending: 3, openIncidents: 1, suppressedIncidents: 1 });
  });
});

describe('GET /setup and DELETE /setup', () => {
  it('derives every field on read', async () => {
    const o = await srv.org();
    const api = srv.api(o.apiKey);
    expect(ok('getSetup', await api.get('/setup'))).toEqual({ hasMonitor: false, hasConfirmedChannel: false, hasStatusPage: false, hasColleague: false, dismissedAt: null });

    const mon = await newMonitor(api, o.workspaceId);
    expect(ok('getSetup', await api.get('/setup')).hasMonitor).toBe(true);
    ok('deleteMonitor', await api.delete(`/monitors/${mon}`));
    expect(ok('getSetup', await api.get('/setup')).hasMonitor).toBe(false);

    expect(ok('getSetup', await api.get('/setup')).hasColleague).toBe(false);
    await srv.member(o.organizationId, 'viewer');
    expect(ok('getSetup', await api.get('/setup')).hasColleague).toBe(true);

    // Only a channel that could deliver now counts: confirmed and enabled, and its
    // provider configured (this server has no SMTP_URL: an e-mail channel never counts).
    const mail = rid('ch');
    await srv.db.insertInto('notification_channels').values({ id: mail, organization_id: o.organizationId, workspace_id: null, owner_membership_id: null, kind: 'email', name: 'mail', target: 'ops@example.test', confirmed_at: new Date() }).execute();
    expect(ok('getSetup', await api.get('/setup')).hasConfirmedChannel).toBe(false);
    const ch = rid('ch');
    await srv.db.insertInto('notification_channels').values({ id: ch, organization_id: o.organizationId, workspace_id: null, owner_membership_id: null, kind: 'webhook', name: 'ops', target: 'https://hooks.example.test/…' }).execute();
    expect(ok('getSetup', await api.get('/setup')).hasConfirmedChannel).toBe(false);
    await srv.db.updateTable('notification_channels').set({ confirmed_at: new Date(), enabled: false }).where('id', '=', ch).execute();
    expect(ok('getSetup', await api.get('/setup')).hasConfirmedChannel).toBe(false);
    await srv.db.updateTable('notification_channels').set({ enabled: true }).where('id', '=', ch).execute();
    expect(ok('getSetup', await api.get('/setup')).hasConfirmedChannel).toBe(true);

    await srv.db.insertInto('status_pages').values({ id: rid('sp'), organization_id: o.organizationId, workspace_id: o.workspaceId, name: 'Status', slug: rid('s') }).execute();
    expect(ok('getSetup', await api.get('/setup')).hasStatusPage).toBe(true);
  });

  it("a confined key's checklist is of its workspaces (and the organisation's own channels)", async () => {
    const o = await srv.org();
    const owner = srv.api(o.apiKey);
    const wsB = ok('createWorkspace', await owner.post('/workspaces', { name: 'B' }), 201).id;
    const confined = srv.api((await srv.member(o.organizationId, 'viewer', [wsB])).apiKey);
    await newMonitor(owner, o.workspaceId);
    await srv.db.insertInto('status_pages').values({ id: rid('sp'), organization_id: o.organizationId, workspace_id: o.workspaceId, name: 'Status', slug: rid('s') }).execute();
    const ch = rid('ch');
    await srv.db.insertInto('notification_channels').values({ id: ch, organization_id: o.organizationId, workspace_id: o.workspaceId, owner_membership_id: null, kind: 'webhook', name: 'ops', target: 'https://hooks.example.test/a', confirmed_at: new Date() }).execute();
    expect(ok('getSetup', await owner.get('/setup'))).toMatchObject({ hasMonitor: true, hasStatusPage: true, hasConfirmedChannel: true });
    expect(ok('getSetup', await confined.get('/setup'))).toMatchObject({ hasMonitor: false, hasStatusPage: false, hasConfirmedChannel: false });
    // An organisation-wide channel is the confined key's too (it sees it in GET /channels).
    await srv.db.updateTable('notification_channels').set({ workspace_id: null }).where('id', '=', ch).execute();
    expect(ok('getSetup', await confined.get('/setup')).hasConfirmedChannel).toBe(true);
    await srv.db.insertInto('status_pages').values({ id: rid('sp'), organization_id: o.organizationId, workspace_id: wsB, name: 'Status B', slug: rid('s') }).execute();
    expect(ok('getSetup', await confined.get('/setup')).hasStatusPage).toBe(true);
  });

  it('DELETE /setup needs org:update and dismisses the checklist for the whole organisation', async () => {
    const o = await srv.org();
    const owner = srv.api(o.apiKey);
    const member = srv.api((await srv.member(o.organizationId, 'member')).apiKey);
    const refused = await member.delete('/setup');
    expect(refused.status).toBe(403);
    expect(refused.body.vars.permission).toBe('org:update');
    expect(ok('getSetup', await owner.get('/setup')).dismissedAt).toBeNull();

    const t0 = Date.now();
    expect(ok('dismissSetup', await owner.delete('/setup'))).toEqual({ ok: true });
    const seen = ok('getSetup', await member.get('/setup')).dismissedAt;
    expect(Math.abs(Date.parse(seen) - t0)).toBeLessThan(60_000);
    expect(ok('getSetup', await owner.get('/setup')).dismissedAt).toBe(seen);
    // Another organisation is untouched.
    expect(ok('getSetup', await srv.api((await srv.org()).apiKey).get('/setup')).dismissedAt).toBeNull();
  });
});

describe('GET /me', () => {
  it('describes user, organisation, membership, key, entitlements and usage', async () => {
    const o = await srv.org({ plan: 'pro' });
    const api = srv.api(o.apiKey);
    await newMonitor(api, o.workspaceId);
    const me = ok('getMe', await api.get('/me'));
    expect(me.user.id).toBe(o.userId);
    expect(me.organization).toMatchObject({ id: o.organizationId, plan: 'pro' });
    expect(me.membership).toMatchObject({ role: 'owner', workspaceIds: null });
    expect(o.apiKey.startsWith(me.key.prefix)).toBe(true);
    expect(me.key.scopes).toEqual([]);
    expect(me.entitlements.plan).toBe('pro');
    expect(me.usage.monitors).toBe(1);
    expect(me).not.toHaveProperty('organizations');
  });

  it("reports a scoped key's scopes and a confined member's role and confinement", async () => {
    const o = await srv.org();
    const owner = srv.api(o.apiKey);
    const scoped = ok('createApiKey', await owner.post('/api-keys', { name: 'ro', scopes: ['monitor:read'] }), 201);
    expect(ok('getMe', await srv.api(scoped.token).get('/me')).key).toMatchObject({ id: scoped.id, scopes: ['monitor:read'] });
    const member = srv.api((await srv.member(o.organizationId, 'member', [o.workspaceId])).apiKey);
    expect(ok('getMe', await member.get('/me')).membership).toMatchObject({ role: 'member', workspaceIds: [o.workspaceId] });
  });
});

describe('GET /api/v1 (index)', () => {
  const route = (data: any, method: string, path: string) => {
    const r = data.routes.find((x: any) => x.method === method && x.path === path);
    expect({ method, path, found: Boolean(r) }).toEqual({ method, path, found: true });
    return r;
  };

  it('lists every route relative to /api/v1, with allowed reflecting an owner key, key info and the mcp address', async () => {
    const o = await srv.org();
    const api = srv.api(o.apiKey);
    const data = ok('getIndex', await api.get(''));
    const me = ok('getMe', await api.get('/me'));
    expect(data.routes).toHaveLength(routes.length);
    for (const [m, p] of [['GET', '/monitors'], ['POST', '/monitors'], ['PATCH', '/monitors/{id}'], ['GET', '/audit'], ['DELETE', '/setup']]) {
      expect(route(data, m, p).allowed).toBe(true);
    }
    expect(route(data, 'DELETE', '/account').allowed).toBe(false); // session only
    expect(data.key).toMatchObject({ id: me.key.id, prefix: me.key.prefix, role: 'owner', scopes: [], workspaceIds: null });
    expect(typeof data.mcp).toBe('string');
    expect(new URL(data.mcp).pathname).toBe('/mcp');
  });

  it("a viewer's index: reads allowed, writes not", async () => {
    const o = await srv.org();
    const viewer = srv.api((await srv.member(o.organizationId, 'viewer', [o.workspaceId])).apiKey);
    const data = ok('getIndex', await viewer.get(''));
    expect(route(data, 'GET', '/monitors').allowed).toBe(true);
    for (const [m, p] of [['POST', '/monitors'], ['PATCH', '/monitors/{id}'], ['DELETE', '/monitors/{id}'], ['POST', '/api-keys'], ['GET', '/audit']]) {
      expect({ m, p, allowed: route(data, m, p).allowed }).toEqual({ m, p, allowed: false });
    }
    expect(data.key).toMatchObject({ role: 'viewer', workspaceIds: [o.workspaceId] });
  });

  it('a scoped key: only its scopes are allowed', async () => {
    const o = await srv.org();
    const k = ok('createApiKey', await srv.api(o.apiKey).post('/api-keys', { name: 'pause only', scopes: ['monitor:read', 'monitor:pause'] }), 201);
    const data = ok('getIndex', await srv.api(k.token).get(''));
    expect(route(data, 'GET', '/monitors').allowed).toBe(true);
    expect(route(data, 'PATCH', '/monitors/{id}').allowed).toBe(true);
    expect(route(data, 'POST', '/monitors').allowed).toBe(false);
    expect(route(data, 'GET', '/workspaces').allowed).toBe(false);
    expect(data.key.id).toBe(k.id);
    expect([...data.key.scopes].sort()).toEqual(['monitor:pause', 'monitor:read']);
  });

  it('without a key is 401', async () => {
    expect((await srv.api(null).get('')).status).toBe(401);
  });
});
