/**
 * Workspaces: list/create/update/delete, and workspace confinement of keys
 * (records outside a confined key's view answer 404 like another organisation's).
 */
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';

let srv: TestServer;

beforeAll(async () => {
  const env = { PORT: '0', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' };
  srv = await startTestServer(env);
});
afterAll(() => srv.close());

describe('workspace CRUD', () => {
  let api: ApiClient;
  let defaultId: string;
  beforeAll(async () => {
    const o = await srv.org();
    api = srv.api(o.apiKey);
    defaultId = o.workspaceId;
  });

  it('lists the default workspace of a new organisation', async () => {
    const list = ok('listWorkspaces', await api.get('/workspaces'));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: defaultId, isDefault: true, clientReference: null });
  });

  it('creates a workspace (201) that then appears in the list', async () => {
    const w = ok('createWorkspace', await api.post('/workspaces', { name: 'Acme Client', clientReference: 'C-42' }), 201);
    expect(w).toMatchObject({ name: 'Acme Client', clientReference: 'C-42', isDefault: false });
    expect(w.slug).toMatch(/^[a-z0-9-]+$/);
    const list = ok('listWorkspaces', await api.get('/workspaces'));
    expect(list.map((x: any) => x.id)).toEqual(expect.arrayContaining([defaultId, w.id]));
  });

  it.each([['an empty', ''], ['an 81-character', 'n'.repeat(81)]])('%s name is 400 naming name, on create and on update', async (_l, name) => {
    const c = await api.post('/workspaces', { name });
    expect(c.status).toBe(400);
    expect(c.body.details.field).toBe('name');
    const u = await api.patch(`/workspaces/${defaultId}`, { name });
    expect(u.status).toBe(400);
    expect(u.body.details.field).toBe('name');
  });

  it('accepts names of 1 and 80 characters', async () => {
    expect(ok('createWorkspace', await api.post('/workspaces', { name: 'x' }), 201).name).toBe('x');
    expect(ok('createWorkspace', await api.post('/workspaces', { name: 'y'.repeat(80) }), 201).name).toBe('y'.repeat(80));
  });

  it('keeps the slug when the workspace is renamed', async () => {
    const w = ok('createWorkspace', await api.post('/workspaces', { name: 'Original Name' }), 201);
    const renamed = ok('updateWorkspace', await api.patch(`/workspaces/${w.id}`, { name: 'Completely Different' }));
    expect(renamed).toMatchObject({ id: w.id, name: 'Completely Different', slug: w.slug });
    const listed = ok('listWorkspaces', await api.get('/workspaces')).find((x: any) => x.id === w.id);
    expect(listed).toMatchObject({ name: 'Completely Different', slug: w.slug });
  });

  it('clientReference: missing leaves it, null clears it', async () => {
    const w = ok('createWorkspace', await api.post('/workspaces', { name: 'Ref', clientReference: 'R-1' }), 201);
    expect(ok('updateWorkspace', await api.patch(`/workspaces/${w.id}`, { name: 'Ref 2' })).clientReference).toBe('R-1');
    expect(ok('updateWorkspace', await api.patch(`/workspaces/${w.id}`, { name: 'Ref 2', clientReference: null })).clientReference).toBeNull();
    expect(ok('listWorkspaces', await api.get('/workspaces')).find((x: any) => x.id === w.id).clientReference).toBeNull();
  });

  it('clientReference: an empty string clears it too (UpdateWorkspaceBody)', async () => {
    const w = ok('createWorkspace', await api.post('/workspaces', { name: 'Ref empty', clientReference: 'R-2' }), 201);
    expect(ok('updateWorkspace', await api.patch(`/workspaces/${w.id}`, { name: 'Ref empty', clientReference: '' })).clientReference).toBeNull();
  });

  it('refuses to delete the default workspace', async () => {
    const res = await api.delete(`/workspaces/${defaultId}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('default_workspace');
    expect(ok('listWorkspaces', await api.get('/workspaces')).map((x: any) => x.id)).toContain(defaultId);
  });

  it('deletes another workspace: {id, deleted: true}, then gone (404)', async () => {
    const w = ok('createWorkspace', await api.post('/workspaces', { name: 'Doomed' }), 201);
    expect(ok('deleteWorkspace', await api.delete(`/workspaces/${w.id}`))).toEqual({ id: w.id, deleted: true });
    expect(ok('listWorkspaces', await api.get('/workspaces')).map((x: any) => x.id)).not.toContain(w.id);
    const again = await api.delete(`/workspaces/${w.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    expect((await api.patch(`/workspaces/${w.id}`, { name: 'zombie' })).status).toBe(404);
  });

  it('a member (no workspace:update) cannot create, rename or delete', async () => {
    const o = await srv.org();
    const m = srv.api((await srv.member(o.organizationId, 'member')).apiKey);
    for (const res of [await m.post('/workspaces', { name: 'nope' }), await m.patch(`/workspaces/${o.workspaceId}`, { name: 'nope' })]) {
      expect(res.status).toBe(403);
      expect(res.body.vars.permission).toBe('workspace:update');
    }
    expect(ok('listWorkspaces', await m.get('/workspaces'))).toHaveLength(1);
  });
});

describe('confinement', () => {
  let owner: ApiClient;
  let confined: ApiClient;
  let orgId: string;
  let wsA: string;
  let wsB: string;
  let foreignWs: string;
  let foreign: ApiClient;

  beforeAll(async () => {
    const o = await srv.org();
    orgId = o.organizationId;
    owner = srv.api(o.apiKey);
    wsA = ok('createWorkspace', await owner.post('/workspaces', { name: 'A' }), 201).id;
    wsB = ok('createWorkspace', await owner.post('/workspaces', { name: 'B' }), 201).id;
    confined = srv.api((await srv.member(orgId, 'admin', [wsA])).apiKey);
    const f = await srv.org();
    foreign = srv.api(f.apiKey);
    foreignWs = ok('createWorkspace', await foreign.post('/workspaces', { name: 'F' }), 201).id;
  });

  it('a confined key lists only its own workspaces', async () => {
    expect(ok('listWorkspaces', await confined.get('/workspaces')).map((x: any) => x.id)).toEqual([wsA]);
    expect(ok('listWorkspaces', await owner.get('/workspaces')).map((x: any) => x.id)).toEqual(expect.arrayContaining([wsA, wsB]));
  });

  it('other workspaces of the organisation answer 404 exactly like another organisation\'s', async () => {
    const foreignPatch = await confined.patch(`/workspaces/${foreignWs}`, { name: 'x' });
    const foreignDelete = await confined.delete(`/workspaces/${foreignWs}`);
    expect(foreignPatch.status).toBe(404);
    expect(foreignDelete.status).toBe(404);
    const patch = await confined.patch(`/workspaces/${wsB}`, { name: 'x' });
    const del = await confined.delete(`/workspaces/${wsB}`);
    expect(patch.status).toBe(404);
    expect(patch.body).toEqual(foreignPatch.body);
    expect(del.status).toBe(404);
    expect(del.body).toEqual(foreignDelete.body);
    // Nothing happened to either.
    expect(ok('listWorkspaces', await owner.get('/workspaces')).find((x: any) => x.id === wsB).name).toBe('B');
    expect(ok('listWorkspaces', await foreign.get('/workspaces')).find((x: any) => x.id === foreignWs).name).toBe('F');
  });

  it('the confined key may update its own workspace', async () => {
    expect(ok('updateWorkspace', await confined.patch(`/workspaces/${wsA}`, { name: 'A renamed' })).name).toBe('A renamed');
  });

  it('monitors outside the view are 404 and absent from lists; creating there is 404', async () => {
    const cfg = JSON.stringify({ url: 'https://a.example' });
    const inA = ok('createMonitor', await owner.post('/monitors', { name: 'in A', kind: 'http', workspaceId: wsA, config: cfg }), 201).id;
    const inB = ok('createMonitor', await owner.post('/monitors', { name: 'in B', kind: 'http', workspaceId: wsB, config: cfg }), 201).id;
    const foreignMon = ok('createMonitor', await foreign.post('/monitors', { name: 'F', kind: 'http', workspaceId: foreignWs, config: cfg }), 201).id;

    expect(ok('listMonitors', await confined.get('/monitors')).map((m: any) => m.id)).toEqual([inA]);
    expect(ok('getMonitor', await confined.get(`/monitors/${inA}`)).id).toBe(inA);
    const foreignGet = await confined.get(`/monitors/${foreignMon}`);
    expect(foreignGet.status).toBe(404);
    for (const res of [await confined.get(`/monitors/${inB}`), await confined.patch(`/monitors/${inB}`, { name: 'x' }), await confined.delete(`/monitors/${inB}`)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(foreignGet.body);
    }
    const create = await confined.post('/monitors', { name: 'sneak', kind: 'http', workspaceId: wsB, config: cfg });
    expect(create.status).toBe(404);
    expect(create.body.details.field).toBe('workspaceId');
    expect(ok('getMonitor', await owner.get(`/monitors/${inB}`)).name).toBe('in B');
    const summary = ok('getSummary', await confined.get('/summary'));
    expect(summary.total).toBe(1);
  });
});
