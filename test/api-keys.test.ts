/**
 * API keys: the token shown once, only its SHA-256 stored, revocation and
 * expiry, one 401 for every bad credential, scopes, roles and confinement.
 */
import { createHash, randomBytes } from 'node:crypto';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { forgetCallers } from '../src/auth/authenticate';

let srv: TestServer;
let orgId: string;
let ws: string;
let owner: ApiClient;

function forbidden(res: ApiResponse, permission: string) {
  expect(res.status).toBe(403);
  expect(res.body.vars.permission).toBe(permission);
  expect(res.body.error).toContain(permission);
}

const mint = async (api: ApiClient, body: Record<string, unknown> = {}) => ok('createApiKey', await api.post('/api-keys', { name: 'k', ...body }), 201);
const monitorBody = (workspaceId: string) => ({ name: 'm', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://a.example' }) });

beforeAll(async () => {
  const env = { PORT: '0', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' };
  srv = await startTestServer(env);
  const o = await srv.org();
  orgId = o.organizationId;
  ws = o.workspaceId;
  owner = srv.api(o.apiKey);
});
afterAll(() => srv.close());

describe('the token', () => {
  it('is returned at creation only; the list shows the prefix and never the token', async () => {
    const k = await mint(owner, { name: 'CI deploys' });
    expect(k.token).toMatch(/^vk_/);
    expect(k.token.startsWith(k.prefix)).toBe(true);
    expect(k.prefix.length).toBeLessThan(k.token.length);
    expect(k).toMatchObject({ name: 'CI deploys', scopes: [], workspaceIds: null, revokedAt: null, expiresAt: null });
    const res = await owner.get('/api-keys');
    const list = ok('listApiKeys', res);
    const listed = list.find((x: any) => x.id === k.id);
    expect(listed).toMatchObject({ id: k.id, prefix: k.prefix, name: 'CI deploys' });
    expect(listed).not.toHaveProperty('token');
    expect(JSON.stringify(res.body)).not.toContain(k.token);
    // The token works.
    ok('getMe', await srv.api(k.token).get('/me'));
  });

  it('is stored only as its SHA-256: token_hash is 32 bytes and no column holds the token', async () => {
    const k = await mint(owner);
    const row = await srv.db.selectFrom('api_keys').selectAll().where('id', '=', k.id).executeTakeFirstOrThrow();
    expect(Buffer.isBuffer(row.token_hash)).toBe(true);
    expect(row.token_hash.length).toBe(32);
    expect(row.token_hash.equals(createHash('sha256').update(k.token).digest())).toBe(true);
    for (const [col, v] of Object.entries(row)) {
      const text = Buffer.isBuffer(v) ? `${v.toString('utf8')}|${v.toString('hex')}|${v.toString('base64')}|${v.toString('base64url')}` : JSON.stringify(v);
      expect({ col, holdsToken: text.includes(k.token) }).toEqual({ col, holdsToken: false });
    }
    // The whole table holds no token, not even the owner key's.
    const all = await srv.db.selectFrom('api_keys').selectAll().execute();
    expect(JSON.stringify(all.map((r) => ({ ...r, token_hash: null })))).not.toContain(k.token);
  });

  it('honours expiresInDays', async () => {
    const k = await mint(owner, { expiresInDays: 7 });
    const days = (Date.parse(k.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.1);
  });
});

describe('revocation, expiry and the one 401', () => {
  it('revokes by query id; the key is then 401 and listed as revoked', async () => {
    const k = await mint(owner);
    expect(ok('revokeApiKey', await owner.delete(`/api-keys?id=${k.id}`))).toEqual({ id: k.id, deleted: true });
    expect((await srv.api(k.token).get('/me')).status).toBe(401);
    expect(ok('listApiKeys', await owner.get('/api-keys')).find((x: any) => x.id === k.id).revokedAt).not.toBeNull();
  });

  it('revokes by body id', async () => {
    const k = await mint(owner);
    ok('getMe', await srv.api(k.token).get('/me'));
    expect(ok('revokeApiKey', await owner.delete('/api-keys', { id: k.id }))).toEqual({ id: k.id, deleted: true });
    expect((await srv.api(k.token).get('/monitors')).status).toBe(401);
  });

  it('an expired key is 401', async () => {
    const k = await mint(owner);
    ok('getMe', await srv.api(k.token).get('/me'));
    await srv.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', k.id).execute();
    // The row was changed behind the server's back: its 2-second caller cache would see it after the TTL.
    forgetCallers();
    expect((await srv.api(k.token).get('/me')).status).toBe(401);
  });

  it('missing, malformed, unknown, revoked and expired keys all get the identical 401 body', async () => {
    const revoked = await mint(owner);
    await owner.delete(`/api-keys?id=${revoked.id}`);
    const expired = await mint(owner);
    await srv.db.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expired.id).execute();
    forgetCallers();
    const unknown = `vk_${randomBytes(32).toString('base64url')}`;
    const sameprefix = `${revoked.token.slice(0, revoked.prefix.length)}${'A'.repeat(revoked.token.length - revoked.prefix.length)}`;
    const answers = await Promise.all([null, 'garbage', unknown, sameprefix, revoked.token, expired.token].map((t) => srv.api(t).get('/monitors')));
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.body).toEqual(answers[0].body);
    }
    expect(typeof answers[0].body.code).toBe('string');
    expect(typeof answers[0].body.error).toBe('string');
  });
});

describe('scopes and roles', () => {
  it('scopes narrow: a monitor:read key reads but POST /monitors is 403 naming monitor:create', async () => {
    const k = await mint(owner, { scopes: ['monitor:read'] });
    expect(k.scopes).toEqual(['monitor:read']);
    const api = srv.api(k.token);
    ok('listMonitors', await api.get('/monitors'));
    forbidden(await api.post('/monitors', monitorBody(ws)), 'monitor:create');
    forbidden(await api.get('/workspaces'), 'workspace:read');
  });

  it('asking for a scope the creator lacks is 403 naming it', async () => {
    const member = srv.api((await srv.member(orgId, 'member')).apiKey);
    forbidden(await member.post('/api-keys', { name: 'x', scopes: ['monitor:read', 'audit_log:read'] }), 'audit_log:read');
    // A scoped key cannot widen itself either, and passes its narrowing on to keys it mints.
    const scoped = srv.api((await mint(owner, { scopes: ['monitor:read', 'api_key:manage'] })).token);
    forbidden(await scoped.post('/api-keys', { name: 'wider', scopes: ['monitor:create'] }), 'monitor:create');
    const child = srv.api((await mint(scoped, { name: 'child' })).token);
    ok('listMonitors', await child.get('/monitors'));
    forbidden(await child.post('/monitors', monitorBody(ws)), 'monitor:create');
  });

  it("a viewer's key cannot write", async () => {
    const viewer = srv.api((await srv.member(orgId, 'viewer')).apiKey);
    ok('listMonitors', await viewer.get('/monitors'));
    forbidden(await viewer.post('/monitors', monitorBody(ws)), 'monitor:create');
    forbidden(await viewer.post('/api-keys', { name: 'x' }), 'api_key:manage');
    expect(ok('getMe', await viewer.get('/me')).membership).toMatchObject({ role: 'viewer', workspaceIds: null });
  });

  it('a member sees and revokes only their own keys; another person\'s key is 404', async () => {
    const m = srv.api((await srv.member(orgId, 'member')).apiKey);
    const own = await mint(m, { name: 'mine' });
    const ownerKey = await mint(owner, { name: "owner's" });
    const ids = ok('listApiKeys', await m.get('/api-keys')).map((x: any) => x.id);
    expect(ids).toContain(own.id);
    expect(ids).not.toContain(ownerKey.id);
    expect((await m.delete(`/api-keys?id=${ownerKey.id}`)).status).toBe(404);
    ok('getMe', await srv.api(ownerKey.token).get('/me'));
    // Owners see every key of the organisation.
    expect(ok('listApiKeys', await owner.get('/api-keys')).map((x: any) => x.id)).toEqual(expect.arrayContaining([own.id, ownerKey.id]));
  });
});

describe('confinement and /me', () => {
  it('/me reports role and confinement', async () => {
    const me = ok('getMe', await owner.get('/me'));
    expect(me.membership).toMatchObject({ role: 'owner', workspaceIds: null });
    expect(me.organization.id).toBe(orgId);
    expect(me).not.toHaveProperty('organizations');
  });

  it('keys minted by a confined member inherit the confinement', async () => {
    const wsB = ok('createWorkspace', await owner.post('/workspaces', { name: 'B' }), 201).id;
    const inB = ok('createMonitor', await owner.post('/monitors', monitorBody(wsB)), 201).id;
    const inDefault = ok('createMonitor', await owner.post('/monitors', monitorBody(ws)), 201).id;
    const member = srv.api((await srv.member(orgId, 'member', [wsB])).apiKey);
    expect(ok('getMe', await member.get('/me')).membership).toMatchObject({ role: 'member', workspaceIds: [wsB] });

    const child = await mint(member, { name: 'child' });
    expect(child.workspaceIds).toEqual([wsB]);
    const api = srv.api(child.token);
    expect(ok('getMe', await api.get('/me')).membership).toMatchObject({ role: 'member', workspaceIds: [wsB] });
    expect(ok('listMonitors', await api.get('/monitors')).map((x: any) => x.id)).toEqual([inB]);
    expect((await api.get(`/monitors/${inDefault}`)).status).toBe(404);
    // It cannot name a workspace outside its creator's confinement.
    const wider = await member.post('/api-keys', { name: 'wider', workspaceIds: [ws] });
    expect(wider.status).toBe(404);
  });

  it('an unconfined owner may confine a key; /me shows the key\'s confinement', async () => {
    const k = await mint(owner, { workspaceIds: [ws] });
    expect(k.workspaceIds).toEqual([ws]);
    expect(ok('getMe', await srv.api(k.token).get('/me')).membership.workspaceIds).toEqual([ws]);
  });
});

describe('caller cache', () => {
  it('a key past its expiry time is refused even while its caller is cached', async () => {
    const srv2 = await startTestServer();
    try {
      const org = await srv2.org();
      const owner2 = srv2.api(org.apiKey);
      const made = await owner2.post('/api-keys', { name: 'short', expiresInDays: 1 });
      const token = made.body.data.token as string;
      expect((await srv2.api(token).get('/me')).status).toBe(200);
      // Move only the wall clock two days on; timers and I/O stay real.
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] });
      jest.setSystemTime(Date.now() + 2 * 86_400_000);
      try {
        expect((await srv2.api(token).get('/me')).status).toBe(401);
      } finally {
        jest.useRealTimers();
      }
    } finally {
      await srv2.close();
    }
  });
});
