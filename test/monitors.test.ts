/**
 * Monitors: GET/POST /monitors, GET/PATCH/DELETE /monitors/{id}, black-box
 * against the spec (api-v1.md) and the contract's schemas.
 */
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';

let srv: TestServer;
let owner: ApiClient;
let ws: string;

const SECRET_URL = 'https://secret-host.example/health';
const SECRET_HEADER = 'Bearer s3cr3t-header-value';
const httpConfig = (url = SECRET_URL) => JSON.stringify({ url, headers: { Authorization: SECRET_HEADER }, assertions: [{ type: 'status_code', operator: 'lt', value: '400' }] });

/** Asserts the status and that the body matches the operation's success schema. */

/** Asserts the body carries neither `config` nor any of the config's contents. */
function noConfig(body: unknown) {
  const text = JSON.stringify(body);
  expect(text).not.toContain('"config"');
  expect(text).not.toContain('secret-host');
  expect(text).not.toContain('s3cr3t');
}

async function create(api: ApiClient, workspaceId: string, extra: Record<string, unknown> = {}) {
  return api.post('/monitors', { name: 'Site', kind: 'http', workspaceId, config: httpConfig(), ...extra });
}

beforeAll(async () => {
  const env = { PORT: '0', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' };
  srv = await startTestServer(env);
  const o = await srv.org();
  owner = srv.api(o.apiKey);
  ws = o.workspaceId;
});
afterAll(() => srv.close());

describe('POST /monitors', () => {
  it('returns 201 with the monitor: interval defaulted to 300, tags lower-cased, hosts empty, no config', async () => {
    const res = await create(owner, ws, { name: 'Homepage', tags: ['Prod', 'EU'] });
    const m = ok('createMonitor', res, 201);
    expect(m).toMatchObject({ name: 'Homepage', kind: 'http', intervalSeconds: 300, tags: ['prod', 'eu'], hosts: [], workspace: { id: ws } });
    expect(typeof m.id).toBe('string');
    noConfig(res.body);
    const again = ok('getMonitor', await owner.get(`/monitors/${m.id}`));
    expect(again.tags).toEqual(['prod', 'eu']);
  });

  it('clamps the interval up to the plan floor, never refusing it', async () => {
    const free = await srv.org({ plan: 'free' });
    const api = srv.api(free.apiKey);
    expect(ok('createMonitor', await create(api, free.workspaceId, { intervalSeconds: 10 }), 201).intervalSeconds).toBe(180);
    expect(ok('createMonitor', await create(api, free.workspaceId, { intervalSeconds: 600 }), 201).intervalSeconds).toBe(600);
    const m = ok('createMonitor', await create(api, free.workspaceId), 201);
    expect(m.intervalSeconds).toBe(300);
    expect(ok('updateMonitor', await api.patch(`/monitors/${m.id}`, { intervalSeconds: 10 })).intervalSeconds).toBe(180);
    // Business floor is lower than 180: the same request keeps more of what was asked.
    expect(ok('createMonitor', await create(owner, ws, { intervalSeconds: 10 }), 201).intervalSeconds).toBeLessThan(180);
  });

  it.each([
    ['name', { kind: 'http', workspaceId: 'W', config: '{"url":"https://a.example"}' }],
    ['kind', { name: 'x', workspaceId: 'W', config: '{"url":"https://a.example"}' }],
    ['workspaceId', { name: 'x', kind: 'http', config: '{"url":"https://a.example"}' }],
    ['config', { name: 'x', kind: 'http', workspaceId: 'W' }],
  ])('missing %s is 400 naming the field', async (field, body) => {
    const res = await owner.post('/monitors', JSON.parse(JSON.stringify(body).replace('"W"', JSON.stringify(ws))));
    expect(res.status).toBe(400);
    expect(res.body.details.field).toBe(field);
  });

  it('an unknown kind is 400 naming kind', async () => {
    const res = await create(owner, ws, { kind: 'gopher' });
    expect(res.status).toBe(400);
    expect(res.body.details.field).toBe('kind');
  });

  it('validates config by kind: a bad url is 400 naming config.url; non-JSON is 400 naming config', async () => {
    const bad = await create(owner, ws, { config: JSON.stringify({ url: 'ftp://nope' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.details.field).toMatch(/^(config\.)?url$/);
    const notJson = await create(owner, ws, { config: 'not json' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.details.field).toBe('config');
    // A tls_audit config is not an http config.
    const wrongShape = await create(owner, ws, { kind: 'tls_audit', config: httpConfig() });
    expect(wrongShape.status).toBe(400);
  });

  it('the plan monitor cap answers limit_reached with string vars', async () => {
    const free = await srv.org({ plan: 'free' });
    const api = srv.api(free.apiKey);
    for (let i = 0; i < 20; i++) expect((await create(api, free.workspaceId, { name: `m${i}` })).status).toBe(201);
    const res = await create(api, free.workspaceId, { name: 'one too many' });
    expect(res.status).toBe(402);
    expect(res.body.code).toBe('limit_reached');
    expect(res.body.vars).toEqual({ plan: 'free', limit: '20', current: '20', resource: 'monitors' });
    expect(ok('listMonitors', await api.get('/monitors'))).toHaveLength(20);
  });
});

describe('config shapes the contract documents are accepted (createMonitor config description)', () => {
  it.each([
    ['http with a header assertion using `property`', 'http', { url: 'https://a.example', assertions: [{ type: 'header', operator: 'eq', value: 'text/html', property: 'Content-Type' }] }],
    ['http with a json_path assertion using `property`', 'http', { url: 'https://a.example', assertions: [{ type: 'json_path', operator: 'eq', value: 'ok', property: '$.status' }] }],
    ['heartbeat {}', 'heartbeat', {}],
    ['tcp', 'tcp', { host: 'db.example', port: 5432 }],
    ['dns with recordType PTR', 'dns', { name: '1.2.0.192.in-addr.arpa', recordType: 'PTR' }],
    ['tls_audit', 'tls_audit', { host: 'example.com', port: 443, warnDays: 14 }],
    ['mail_posture', 'mail_posture', { domain: 'example.com', dkimSelectors: ['s1'] }],
    ['snmp v2c', 'snmp', { host: 'sw1.example', community: 'c0mm', oids: [{ oid: '1.3.6.1.2.1.1.3.0', name: 'uptime' }] }],
    ['snmp v3 with its documented fields and reading assertions', 'snmp', {
      host: 'sw1.example', version: 'v3', username: 'mon', securityLevel: 'authPriv', authProtocol: 'SHA-256', authPassword: 'a-pass',
      privProtocol: 'AES', privPassword: 'p-pass', oids: [{ oid: '1.3.6.1.2.1.1.3.0', name: 'uptime', unit: 's' }],
      assertions: [{ reading: 'uptime', operator: 'gt', value: '60' }],
    }],
  ])('%s', async (_label, kind, config) => {
    const res = await owner.post('/monitors', { name: `kind ${kind}`, kind, workspaceId: ws, config: JSON.stringify(config) });
    ok('createMonitor', res, 201);
    expect(res.body.data.kind).toBe(kind);
    expect(JSON.stringify(res.body)).not.toContain('"config"');
  });
});

describe('GET /monitors tag filter', () => {
  let api: ApiClient;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const o = await srv.org();
    api = srv.api(o.apiKey);
    for (const [name, tags] of [['a', ['Prod', 'API']], ['b', ['prod']], ['c', ['api', 'eu']], ['d', []]] as const) {
      ids[name] = ok('createMonitor', await create(api, o.workspaceId, { name, tags }), 201).id;
    }
  });
  const names = async (q: string) => (ok('listMonitors', await api.get(`/monitors${q}`)) as any[]).map((m) => m.name).sort();

  it('applies AND semantics and lower-cases entries before comparing', async () => {
    expect(await names('?tag=PROD,Api')).toEqual(['a']);
    expect(await names('?tag=prod')).toEqual(['a', 'b']);
    expect(await names('?tag=api')).toEqual(['a', 'c']);
    expect(await names('?tag=eu,prod')).toEqual([]);
    expect(await names('')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('drops empty and over-long (>64) entries while the rest still applies', async () => {
    expect(await names('?tag=prod,,')).toEqual(['a', 'b']);
    expect(await names(`?tag=prod,${'x'.repeat(65)}`)).toEqual(['a', 'b']);
    expect(await names(`?tag=${'x'.repeat(65)}`)).toEqual(['a', 'b', 'c', 'd']);
    // 64 characters is a valid tag and still filters (nothing carries it).
    expect(await names(`?tag=prod,${'x'.repeat(64)}`)).toEqual([]);
  });

  it('list items carry hosts and no paused, no config', async () => {
    const res = await api.get('/monitors');
    const list = ok('listMonitors', res) as any[];
    expect(list.length).toBe(4);
    for (const m of list) {
      expect(m.hosts).toEqual([]);
      expect(m).not.toHaveProperty('paused');
      expect(m).not.toHaveProperty('lastCheckDetail');
    }
    noConfig(res.body);
  });
});

describe('GET/PATCH/DELETE /monitors/{id}', () => {
  let id: string;
  beforeEach(async () => { id = ok('createMonitor', await create(owner, ws, { tags: ['one'] }), 201).id; });

  it('the single read carries paused and hosts, never config', async () => {
    const res = await owner.get(`/monitors/${id}`);
    const m = ok('getMonitor', res);
    expect(m).toMatchObject({ id, paused: false, hosts: [] });
    expect(m).not.toHaveProperty('lastCheckDetail');
    noConfig(res.body);
  });

  it('lastCheckDetail is null on a tls_audit single read and absent on http', async () => {
    const t = ok('createMonitor', await create(owner, ws, { kind: 'tls_audit', config: JSON.stringify({ host: 'example.com' }) }), 201);
    const m = ok('getMonitor', await owner.get(`/monitors/${t.id}`));
    expect(m).toHaveProperty('lastCheckDetail', null);
    const listed = (ok('listMonitors', await owner.get('/monitors')) as any[]).find((x) => x.id === t.id);
    expect(listed).not.toHaveProperty('lastCheckDetail');
    expect(ok('getMonitor', await owner.get(`/monitors/${id}`))).not.toHaveProperty('lastCheckDetail');
  });

  it('PATCH returns the re-read monitor with paused and hosts, no config', async () => {
    const res = await owner.patch(`/monitors/${id}`, { name: 'Renamed', enabled: false, config: httpConfig('https://secret-host.example/v2') });
    const m = ok('updateMonitor', res);
    expect(m).toMatchObject({ id, name: 'Renamed', enabled: false, paused: false, hosts: [] });
    noConfig(res.body);
    expect(ok('getMonitor', await owner.get(`/monitors/${id}`)).name).toBe('Renamed');
  });

  it('paused true/false sets and clears the paused state', async () => {
    expect(ok('updateMonitor', await owner.patch(`/monitors/${id}`, { paused: true }))).toMatchObject({ paused: true, status: 'paused' });
    expect(ok('getMonitor', await owner.get(`/monitors/${id}`))).toMatchObject({ paused: true, status: 'paused' });
    const back = ok('updateMonitor', await owner.patch(`/monitors/${id}`, { paused: false }));
    expect(back.paused).toBe(false);
    expect(back.status).not.toBe('paused');
  });

  it('an empty PATCH is 400', async () => {
    const res = await owner.patch(`/monitors/${id}`, {});
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('empty_change');
  });

  it('tags are a StringList: replaced lower-cased, null clears', async () => {
    expect(ok('updateMonitor', await owner.patch(`/monitors/${id}`, { tags: ['Blue', 'GREEN'] })).tags).toEqual(['blue', 'green']);
    expect(ok('updateMonitor', await owner.patch(`/monitors/${id}`, { tags: null })).tags).toEqual([]);
    expect(ok('getMonitor', await owner.get(`/monitors/${id}`)).tags).toEqual([]);
  });

  it('config is validated per kind and replaced as a whole, never merged', async () => {
    const bad = await owner.patch(`/monitors/${id}`, { config: JSON.stringify({ url: 'not a url' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.details.field).toMatch(/^(config\.)?url$/);
    // Without url the document is incomplete: it is not merged with the stored one.
    const partial = await owner.patch(`/monitors/${id}`, { config: JSON.stringify({ method: 'HEAD' }) });
    expect(partial.status).toBe(400);
    ok('updateMonitor', await owner.patch(`/monitors/${id}`, { config: JSON.stringify({ url: 'https://b.example', method: 'HEAD' }) }));
  });

  it('a config missing its required url names config.url (BUG: currently "config..url")', async () => {
    const res = await owner.patch(`/monitors/${id}`, { config: JSON.stringify({ method: 'HEAD' }) });
    expect(res.status).toBe(400);
    expect(res.body.details.field).toMatch(/^(config\.)?url$/);
  });

  it('paused needs monitor:pause and every other field monitor:update', async () => {
    const mint = async (scopes: string[]) => srv.api(ok('createApiKey', await owner.post('/api-keys', { name: scopes.join(' '), scopes }), 201).token);
    const pauser = await mint(['monitor:read', 'monitor:pause']);
    const updater = await mint(['monitor:read', 'monitor:update']);

    expect(ok('updateMonitor', await pauser.patch(`/monitors/${id}`, { paused: true })).paused).toBe(true);
    for (const body of [{ name: 'x' }, { name: 'x', paused: false }]) {
      const res = await pauser.patch(`/monitors/${id}`, body);
      expect(res.status).toBe(403);
      expect(res.body.vars.permission).toBe('monitor:update');
    }
    expect(ok('updateMonitor', await updater.patch(`/monitors/${id}`, { name: 'by updater' })).name).toBe('by updater');
    const res = await updater.patch(`/monitors/${id}`, { paused: false });
    expect(res.status).toBe(403);
    expect(res.body.vars.permission).toBe('monitor:pause');
    expect(ok('getMonitor', await owner.get(`/monitors/${id}`))).toMatchObject({ name: 'by updater', paused: true });
  });

  it('DELETE returns {id, deleted: true} and the monitor is gone', async () => {
    expect(ok('deleteMonitor', await owner.delete(`/monitors/${id}`))).toEqual({ id, deleted: true });
    const gone = await owner.get(`/monitors/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
    expect((ok('listMonitors', await owner.get('/monitors')) as any[]).map((m) => m.id)).not.toContain(id);
    expect((await owner.delete(`/monitors/${id}`)).status).toBe(404);
  });

  it("another organisation's monitor answers 404 like a missing one, for GET, PATCH and DELETE", async () => {
    const other = srv.api((await srv.org()).apiKey);
    const missing = await other.get('/monitors/mon_doesnotexist00000000');
    expect(missing.status).toBe(404);
    for (const res of [await other.get(`/monitors/${id}`), await other.patch(`/monitors/${id}`, { name: 'hijack' }), await other.delete(`/monitors/${id}`)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(missing.body);
    }
    expect((ok('listMonitors', await other.get('/monitors')) as any[]).map((m) => m.id)).not.toContain(id);
    expect(ok('getMonitor', await owner.get(`/monitors/${id}`)).name).toBe('Site');
  });
});
