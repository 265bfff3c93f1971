/**
 * Hosts: GET/POST /hosts, GET/PATCH/DELETE /hosts/{id}, POST/DELETE
 * /hosts/{id}/monitors, GET/PUT /monitors/{id}/hosts — black-box against the
 * spec (api-v1.md, "Host" and the hosts rows) and the contract's schemas.
 */
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';

let srv: TestServer;
let owner: ApiClient;
let orgId: string;
let ws: string;
let other: ApiClient;
let otherWs: string;

/** Asserts the status and that the body matches the operation's success schema. */

function fails(res: ApiResponse, status: number, code?: string, field?: string) {
  expect({ status: res.status, code: code === undefined ? undefined : res.body?.code }).toEqual({ status, code });
  if (field !== undefined) expect(res.body.details?.field).toBe(field);
}

let n = 0;
const httpConfig = () => JSON.stringify({ url: 'https://hosts.example/health' });

async function monitor(api: ApiClient, workspaceId: string, name = `Mon ${++n}`): Promise<string> {
  return ok('createMonitor', await api.post('/monitors', { name, kind: 'http', workspaceId, config: httpConfig() }), 201).id;
}

async function host(api: ApiClient, name = `host-${++n}`, extra: Record<string, unknown> = {}): Promise<string> {
  return ok('createHost', await api.post('/hosts', { name, ...extra }), 201).id;
}

async function setStatus(ids: string[], status: string) {
  await srv.db.updateTable('monitors').set({ status }).where('id', 'in', ids).execute();
}

async function hostOf(api: ApiClient, id: string) {
  return ok('getHost', await api.get(`/hosts/${id}`));
}

async function listed(api: ApiClient, id: string) {
  const all = ok('listHosts', await api.get('/hosts'));
  return all.find((h: { id: string }) => h.id === id);
}

async function auditEntries(): Promise<any[]> {
  return ok('listAuditEntries', await owner.get('/audit?limit=200'));
}

beforeAll(async () => {
  // No worker: the tests play the engine by writing monitor statuses themselves.
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', WORKER: 'false' });
  const o = await srv.org();
  owner = srv.api(o.apiKey);
  orgId = o.organizationId;
  ws = o.workspaceId;
  const p = await srv.org();
  other = srv.api(p.apiKey);
  otherWs = p.workspaceId;
});
afterAll(() => srv.close());

describe('POST /hosts', () => {
  it('returns 201 with the host: no status, nothing pinned or spanning, free text kept', async () => {
    const h = ok('createHost', await owner.post('/hosts', { name: 'db-primary', provider: 'Hetzner', address: '10.0.0.5', notes: 'rack 4' }), 201);
    expect(h).toMatchObject({ name: 'db-primary', provider: 'Hetzner', address: '10.0.0.5', notes: 'rack 4', status: null, pinned: 0, spanning: 0 });
    expect(typeof h.id).toBe('string');
    const bare = ok('createHost', await owner.post('/hosts', { name: 'bare-box' }), 201);
    expect(bare).toMatchObject({ provider: null, address: null, notes: null, status: null });
    expect(ok('listHosts', await owner.get('/hosts')).map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([h.id, bare.id]));
  });

  it('a name equal to an existing one ignoring case and a trailing dot is 409 duplicate_host_name', async () => {
    await host(owner, 'Web-1');
    fails(await owner.post('/hosts', { name: 'web-1.' }), 409, 'duplicate_host_name', 'name');
    fails(await owner.post('/hosts', { name: 'WEB-1' }), 409, 'duplicate_host_name', 'name');
    fails(await owner.post('/hosts', { name: ' web-1 ' }), 409, 'duplicate_host_name', 'name');
    // The other way round too.
    await host(owner, 'api-2.');
    fails(await owner.post('/hosts', { name: 'API-2' }), 409, 'duplicate_host_name', 'name');
    // Names are unique per organisation only.
    ok('createHost', await other.post('/hosts', { name: 'web-1' }), 201);
  });

  it('concurrent creates of one name: exactly one wins, the rest are 409', async () => {
    const names = ['Race-Box', 'race-box.', 'RACE-BOX', 'race-box', 'Race-Box..'];
    const res = await Promise.all(names.map((name) => owner.post('/hosts', { name })));
    expect(res.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of res.filter((x) => x.status !== 201)) fails(r, 409, 'duplicate_host_name', 'name');
  });

  it('a missing, empty or dots-only name is 400 naming name', async () => {
    fails(await owner.post('/hosts', { provider: 'x' }), 400, undefined, 'name');
    fails(await owner.post('/hosts', { name: '' }), 400, undefined, 'name');
    fails(await owner.post('/hosts', { name: '   ' }), 400, undefined, 'name');
    fails(await owner.post('/hosts', { name: '...' }), 400, undefined, 'name');
  });
});

describe('PATCH /hosts/{id}', () => {
  it('changes and clears the free text and renames; acknowledges', async () => {
    const id = await host(owner, 'patch-me', { provider: 'OVH', address: '1.2.3.4', notes: 'n' });
    ok('updateHost', await owner.patch(`/hosts/${id}`, { name: 'patched', provider: null, address: '', notes: 'new notes' }));
    expect(await hostOf(owner, id)).toMatchObject({ name: 'patched', provider: null, address: null, notes: 'new notes' });
    // Its own name in another case is not a clash.
    ok('updateHost', await owner.patch(`/hosts/${id}`, { name: 'PATCHED.' }));
    expect((await hostOf(owner, id)).name).toBe('PATCHED.');
  });

  it('renaming onto another host ignoring case and a trailing dot is 409', async () => {
    await host(owner, 'Taken-Name');
    const id = await host(owner, 'free-name');
    fails(await owner.patch(`/hosts/${id}`, { name: 'taken-name.' }), 409, 'duplicate_host_name', 'name');
    expect((await hostOf(owner, id)).name).toBe('free-name');
  });

  it('an empty change is 400; another organisation\'s or an unknown host is 404', async () => {
    const id = await host(owner);
    fails(await owner.patch(`/hosts/${id}`, {}), 400);
    const foreign = await host(other);
    fails(await owner.patch(`/hosts/${foreign}`, { notes: 'x' }), 404, 'not_found');
    fails(await owner.patch('/hosts/host_unknown', { notes: 'x' }), 404, 'not_found');
  });
});

describe('status, pinned and spanning', () => {
  let h1: string; let h2: string;
  let a: string; let b: string; let s: string;

  beforeAll(async () => {
    h1 = await host(owner, 'status-1');
    h2 = await host(owner, 'status-2');
    a = await monitor(owner, ws, 'A exclusive');
    b = await monitor(owner, ws, 'B exclusive');
    s = await monitor(owner, ws, 'S spanning');
    for (const m of [a, b, s]) ok('addHostMonitor', await owner.post(`/hosts/${h1}/monitors`, { monitorId: m }));
    ok('addHostMonitor', await owner.post(`/hosts/${h2}/monitors`, { monitorId: s }));
  });

  it('counts exclusive monitors as pinned and shared ones as spanning', async () => {
    await setStatus([a, b, s], 'up');
    expect(await listed(owner, h1)).toMatchObject({ pinned: 2, spanning: 1, status: 'up' });
    expect(await listed(owner, h2)).toMatchObject({ pinned: 0, spanning: 1, status: null });
  });

  it('a spanning monitor colours no host, even when down', async () => {
    await setStatus([a, b], 'up');
    await setStatus([s], 'down');
    expect((await listed(owner, h1)).status).toBe('up');
    expect((await listed(owner, h2)).status).toBeNull();
    expect((await hostOf(owner, h2)).status).toBeNull();
  });

  it('the status is the worst of the exclusive monitors: down > degraded > up', async () => {
    await setStatus([a], 'degraded');
    expect((await listed(owner, h1)).status).toBe('degraded');
    await setStatus([b], 'down');
    expect((await listed(owner, h1)).status).toBe('down');
    expect((await hostOf(owner, h1)).status).toBe('down');
    await setStatus([b], 'up');
    expect((await hostOf(owner, h1)).status).toBe('degraded');
  });

  it('paused and pending monitors count only when nothing else does', async () => {
    const h = await host(owner, 'quiet');
    const p = await monitor(owner, ws);
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: p }));
    expect((await listed(owner, h)).status).toBe('pending'); // a new monitor is pending
    ok('updateMonitor', await owner.patch(`/monitors/${p}`, { paused: true }));
    expect((await listed(owner, h)).status).toBe('paused');
    const q = await monitor(owner, ws);
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: q }));
    expect((await listed(owner, h)).status).toBe('pending'); // pending before paused
    await setStatus([q], 'up');
    expect((await listed(owner, h)).status).toBe('up'); // the paused one is ignored
    expect(await listed(owner, h)).toMatchObject({ pinned: 2, spanning: 0 });
  });

  it('the detail lists the monitors with pinned and, when shared, alsoOn', async () => {
    const d = await hostOf(owner, h1);
    expect(d.monitors).toHaveLength(3);
    const byId = Object.fromEntries(d.monitors.map((m: { id: string }) => [m.id, m]));
    expect(byId[a]).toMatchObject({ name: 'A exclusive', kind: 'http', pinned: true, alsoOn: [] });
    expect(byId[b]).toMatchObject({ pinned: true, alsoOn: [] });
    expect(byId[s]).toMatchObject({ pinned: false, alsoOn: [{ id: h2, name: 'status-2' }] });
    const d2 = await hostOf(owner, h2);
    expect(d2.monitors).toEqual([expect.objectContaining({ id: s, pinned: false, alsoOn: [{ id: h1, name: 'status-1' }] })]);
  });

  it('a host becomes exclusive again when a shared monitor leaves the other host', async () => {
    const h = await host(owner);
    const g = await host(owner);
    const m = await monitor(owner, ws);
    ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [h, g] }));
    await setStatus([m], 'down');
    expect(await listed(owner, h)).toMatchObject({ pinned: 0, spanning: 1, status: null });
    ok('removeHostMonitor', await owner.delete(`/hosts/${g}/monitors?monitorId=${m}`));
    expect(await listed(owner, h)).toMatchObject({ pinned: 1, spanning: 0, status: 'down' });
  });
});

describe('POST and DELETE /hosts/{id}/monitors', () => {
  it('attaching is idempotent and shows on the monitor reads', async () => {
    const h = await host(owner, 'attach-target');
    const m = await monitor(owner, ws);
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: m }));
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: m }));
    expect((await hostOf(owner, h)).monitors.map((x: { id: string }) => x.id)).toEqual([m]);
    expect(ok('getMonitor', await owner.get(`/monitors/${m}`)).hosts).toEqual([{ id: h, name: 'attach-target' }]);
    const all = ok('listMonitors', await owner.get('/monitors'));
    expect(all.find((x: { id: string }) => x.id === m).hosts).toEqual([{ id: h, name: 'attach-target' }]);
  });

  it('detaching by query or body is idempotent; the query wins; neither is 400', async () => {
    const h = await host(owner);
    const m1 = await monitor(owner, ws);
    const m2 = await monitor(owner, ws);
    ok('setMonitorHosts', await owner.put(`/monitors/${m1}/hosts`, { hostIds: [h] }));
    ok('setMonitorHosts', await owner.put(`/monitors/${m2}/hosts`, { hostIds: [h] }));
    ok('removeHostMonitor', await owner.delete(`/hosts/${h}/monitors?monitorId=${m1}`, { monitorId: m2 }));
    expect((await hostOf(owner, h)).monitors.map((x: { id: string }) => x.id)).toEqual([m2]);
    ok('removeHostMonitor', await owner.delete(`/hosts/${h}/monitors?monitorId=${m1}`));
    ok('removeHostMonitor', await owner.delete(`/hosts/${h}/monitors`, { monitorId: m2 }));
    ok('removeHostMonitor', await owner.delete(`/hosts/${h}/monitors`, { monitorId: m2 }));
    expect((await hostOf(owner, h)).monitors).toEqual([]);
    expect(ok('getMonitor', await owner.get(`/monitors/${m2}`)).hosts).toEqual([]);
    fails(await owner.delete(`/hosts/${h}/monitors`), 400, undefined, 'monitorId');
  });

  it('another organisation\'s or an unknown host or monitor is 404', async () => {
    const h = await host(owner);
    const m = await monitor(owner, ws);
    const fh = await host(other);
    const fm = await monitor(other, otherWs);
    fails(await owner.post(`/hosts/${fh}/monitors`, { monitorId: m }), 404, 'not_found');
    fails(await owner.post(`/hosts/${h}/monitors`, { monitorId: fm }), 404, 'not_found', 'monitorId');
    fails(await owner.post(`/hosts/${h}/monitors`, { monitorId: 'mon_unknown' }), 404, 'not_found', 'monitorId');
    fails(await owner.delete(`/hosts/${fh}/monitors?monitorId=${m}`), 404, 'not_found');
    fails(await owner.delete(`/hosts/${h}/monitors?monitorId=${fm}`), 404, 'not_found', 'monitorId');
    fails(await owner.post(`/hosts/${h}/monitors`, {}), 400, undefined, 'monitorId');
    // Nothing was linked across organisations.
    expect(ok('getMonitor', await other.get(`/monitors/${fm}`)).hosts).toEqual([]);
    expect((await hostOf(other, fh)).monitors).toEqual([]);
  });
});

describe('GET and PUT /monitors/{id}/hosts', () => {
  it('replaces the whole list and answers the hosts of the monitor', async () => {
    const h1 = await host(owner, 'put-a');
    const h2 = await host(owner, 'put-b');
    const h3 = await host(owner, 'put-c');
    const m = await monitor(owner, ws);
    expect(ok('listMonitorHosts', await owner.get(`/monitors/${m}/hosts`))).toEqual([]);
    let hosts = ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [h2, h1, h1] }));
    expect(hosts.map((x: { id: string }) => x.id)).toEqual([h1, h2]);
    expect(hosts[0]).toMatchObject({ name: 'put-a', pinned: 0, spanning: 1, status: null });
    hosts = ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [h3] }));
    expect(hosts).toEqual([expect.objectContaining({ id: h3, pinned: 1, spanning: 0, status: 'pending' })]);
    expect(ok('listMonitorHosts', await owner.get(`/monitors/${m}/hosts`)).map((x: { id: string }) => x.id)).toEqual([h3]);
    expect(ok('getMonitor', await owner.get(`/monitors/${m}`)).hosts).toEqual([{ id: h3, name: 'put-c' }]);
  });

  it('an empty array means no particular host', async () => {
    const h = await host(owner);
    const m = await monitor(owner, ws);
    ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [h] }));
    expect(ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [] }))).toEqual([]);
    expect(ok('getMonitor', await owner.get(`/monitors/${m}`)).hosts).toEqual([]);
    expect(await listed(owner, h)).toMatchObject({ pinned: 0, spanning: 0, status: null });
  });

  it('drops foreign and unknown host ids instead of refusing them', async () => {
    const h = await host(owner);
    const foreign = await host(other);
    const m = await monitor(owner, ws);
    const hosts = ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [foreign, 'host_unknown', h] }));
    expect(hosts.map((x: { id: string }) => x.id)).toEqual([h]);
    expect((await hostOf(other, foreign)).monitors).toEqual([]);
    expect(ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [foreign] }))).toEqual([]);
  });

  it('another organisation\'s or an unknown monitor is 404; a missing hostIds is 400', async () => {
    const h = await host(owner);
    const fm = await monitor(other, otherWs);
    fails(await owner.get(`/monitors/${fm}/hosts`), 404, 'not_found');
    fails(await owner.put(`/monitors/${fm}/hosts`, { hostIds: [h] }), 404, 'not_found');
    fails(await owner.get('/monitors/mon_unknown/hosts'), 404, 'not_found');
    const m = await monitor(owner, ws);
    fails(await owner.put(`/monitors/${m}/hosts`, {}), 400, undefined, 'hostIds');
  });
});

describe('GET and DELETE /hosts/{id}', () => {
  it('another organisation\'s or an unknown host is 404', async () => {
    const foreign = await host(other);
    fails(await owner.get(`/hosts/${foreign}`), 404, 'not_found');
    fails(await owner.delete(`/hosts/${foreign}`), 404, 'not_found');
    fails(await owner.get('/hosts/host_unknown'), 404, 'not_found');
    expect(ok('listHosts', await owner.get('/hosts')).some((x: { id: string }) => x.id === foreign)).toBe(false);
    ok('getHost', await other.get(`/hosts/${foreign}`));
  });

  it('deleting a host leaves its monitors running, only detached', async () => {
    const h = await host(owner, 'doomed');
    const keep = await host(owner, 'kept');
    const m = await monitor(owner, ws);
    ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [h, keep] }));
    expect(ok('deleteHost', await owner.delete(`/hosts/${h}`))).toEqual({ id: h, deleted: true });
    fails(await owner.get(`/hosts/${h}`), 404, 'not_found');
    fails(await owner.delete(`/hosts/${h}`), 404, 'not_found');
    const after = ok('getMonitor', await owner.get(`/monitors/${m}`));
    expect(after.hosts).toEqual([{ id: keep, name: 'kept' }]);
    expect(await listed(owner, keep)).toMatchObject({ pinned: 1, spanning: 0 });
    // The name is free again.
    await host(owner, 'Doomed.');
  });
});

describe('workspace confinement', () => {
  let confined: ApiClient;
  let ws2: string;
  let h: string; let inside: string; let outside: string;

  beforeAll(async () => {
    ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: 'Confined area' }), 201).id;
    confined = srv.api((await srv.member(orgId, 'member', [ws2])).apiKey);
    h = await host(owner, 'shared-machine');
    inside = await monitor(owner, ws2, 'Inside');
    outside = await monitor(owner, ws, 'Outside');
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: inside }));
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: outside }));
    await setStatus([inside], 'up');
    await setStatus([outside], 'down');
  });

  it('a confined key sees every host, but only its own monitors in figures and details', async () => {
    expect(await listed(owner, h)).toMatchObject({ pinned: 2, status: 'down' });
    expect(await listed(confined, h)).toMatchObject({ pinned: 1, spanning: 0, status: 'up' });
    const d = await hostOf(confined, h);
    expect(d.monitors.map((m: { id: string }) => m.id)).toEqual([inside]);
    expect(ok('listHosts', await confined.get('/hosts')).length).toBe(ok('listHosts', await owner.get('/hosts')).length);
  });

  it('a monitor outside the key\'s workspaces is 404 on every hosts route', async () => {
    fails(await confined.get(`/monitors/${outside}/hosts`), 404, 'not_found');
    fails(await confined.put(`/monitors/${outside}/hosts`, { hostIds: [] }), 404, 'not_found');
    fails(await confined.post(`/hosts/${h}/monitors`, { monitorId: outside }), 404, 'not_found', 'monitorId');
    fails(await confined.delete(`/hosts/${h}/monitors?monitorId=${outside}`), 404, 'not_found', 'monitorId');
    expect((await hostOf(owner, h)).monitors.map((m: { id: string }) => m.id).sort()).toEqual([inside, outside].sort());
  });

  it('a confined key links its own monitors and creates hosts, but cannot rename or delete one', async () => {
    const mine = await host(confined, 'confined-made');
    ok('setMonitorHosts', await confined.put(`/monitors/${inside}/hosts`, { hostIds: [h, mine] }));
    expect((await hostOf(confined, mine)).monitors).toEqual([expect.objectContaining({ id: inside, alsoOn: [{ id: h, name: 'shared-machine' }] })]);
    fails(await confined.patch(`/hosts/${h}`, { notes: 'x' }), 403, 'workspace_confined');
    fails(await confined.delete(`/hosts/${h}`), 403, 'workspace_confined');
    ok('getHost', await confined.get(`/hosts/${h}`));
  });
});

describe('permissions', () => {
  it('a viewer reads hosts but cannot write them', async () => {
    const viewer = srv.api((await srv.member(orgId, 'viewer')).apiKey);
    const h = await host(owner);
    const m = await monitor(owner, ws);
    ok('listHosts', await viewer.get('/hosts'));
    ok('getHost', await viewer.get(`/hosts/${h}`));
    ok('listMonitorHosts', await viewer.get(`/monitors/${m}/hosts`));
    fails(await viewer.post('/hosts', { name: 'nope' }), 403, 'forbidden');
    fails(await viewer.patch(`/hosts/${h}`, { notes: 'x' }), 403, 'forbidden');
    fails(await viewer.delete(`/hosts/${h}`), 403, 'forbidden');
    fails(await viewer.post(`/hosts/${h}/monitors`, { monitorId: m }), 403, 'forbidden');
    fails(await viewer.delete(`/hosts/${h}/monitors?monitorId=${m}`), 403, 'forbidden');
    fails(await viewer.put(`/monitors/${m}/hosts`, { hostIds: [h] }), 403, 'forbidden');
  });
});

describe('audit', () => {
  it('records every change with what changed', async () => {
    const h = await host(owner, 'audited', { provider: 'AWS' });
    const g = await host(owner, 'audited-2');
    const m = await monitor(owner, ws);
    ok('updateHost', await owner.patch(`/hosts/${h}`, { name: 'audited-renamed', notes: 'hello' }));
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: m }));
    ok('addHostMonitor', await owner.post(`/hosts/${h}/monitors`, { monitorId: m })); // no change, no entry
    ok('removeHostMonitor', await owner.delete(`/hosts/${h}/monitors?monitorId=${m}`));
    ok('setMonitorHosts', await owner.put(`/monitors/${m}/hosts`, { hostIds: [g, h] }));
    ok('deleteHost', await owner.delete(`/hosts/${g}`));

    const entries = await auditEntries();
    const find = (action: string, resourceId: string) => {
      const hits = entries.filter((e) => e.action === action && e.resourceId === resourceId);
      expect({ action, resourceId, count: hits.length }).toEqual({ action, resourceId, count: 1 });
      return hits[0];
    };
    expect(find('host.created', h)).toMatchObject({ resourceType: 'host', changes: { name: { from: null, to: 'audited' }, provider: { from: null, to: 'AWS' } } });
    expect(find('host.updated', h).changes).toEqual({ name: { from: 'audited', to: 'audited-renamed' }, notes: { from: null, to: 'hello' } });
    expect(find('host.monitor_added', h)).toMatchObject({ workspaceId: ws, changes: { monitorId: { from: null, to: m } } });
    expect(find('host.monitor_removed', h)).toMatchObject({ changes: { monitorId: { from: m, to: null } } });
    expect(find('monitor.hosts_set', m)).toMatchObject({ resourceType: 'monitor', changes: { hostIds: { from: [], to: [g, h].sort() } } });
    expect(find('host.deleted', g)).toMatchObject({ changes: { name: { from: 'audited-2', to: null }, monitorIds: { from: [m], to: [] } } });
  });
});
