/**
 * The audit log: every configuration change with who and what changed, never
 * a credential, hash or monitor config; cursor pagination; plan and role gates.
 */
import { createHash } from 'node:crypto';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { hashPassword } from '../src/crypto/passwords';
import { audit } from '../src/domain/audit';

let srv: TestServer;

async function allEntries(api: ApiClient): Promise<any[]> {
  const res = await api.get('/audit?limit=200');
  ok('listAuditEntries', res);
  expect(res.body.nextBefore).toBeNull();
  return res.body.data;
}

const SECRET_URL = 'https://audit-secret-host.example/health';
const SECRET_HEADER = 'Bearer hdr-s3cr3t-9f8e7d';

beforeAll(async () => {
  const env = { PORT: '0', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' };
  srv = await startTestServer(env);
});
afterAll(() => srv.close());

describe('what is recorded', () => {
  let owner: ApiClient;
  let ownerToken: string;
  let ownerKeyId: string;
  let ws: string;
  let entries: any[];
  let monId: string;
  let wsId: string;
  let created: { id: string; token: string };
  let memberKeyId: string;
  let memberUserId: string;
  let memberEmail: string;
  let ownerUserId: string;
  let ownerEmail: string;
  let memberMonId: string;

  const find = (action: string, resourceId: string) => {
    const hits = entries.filter((e) => e.action === action && e.resourceId === resourceId);
    expect({ action, resourceId, count: hits.length }).toEqual({ action, resourceId, count: 1 });
    return hits[0];
  };

  beforeAll(async () => {
    const o = await srv.org();
    ownerToken = o.apiKey;
    owner = srv.api(o.apiKey);
    ws = o.workspaceId;
    ownerKeyId = ok('getMe', await owner.get('/me')).key.id;
    const config = JSON.stringify({ url: SECRET_URL, headers: { Authorization: SECRET_HEADER } });
    monId = ok('createMonitor', await owner.post('/monitors', { name: 'Audited', kind: 'http', workspaceId: ws, config, tags: ['a'] }), 201).id;
    ok('updateMonitor', await owner.patch(`/monitors/${monId}`, { name: 'Audited 2', config: JSON.stringify({ url: `${SECRET_URL}/v2`, headers: { 'X-Token': SECRET_HEADER } }) }));
    ok('updateMonitor', await owner.patch(`/monitors/${monId}`, { paused: true }));
    ok('deleteMonitor', await owner.delete(`/monitors/${monId}`));
    wsId = ok('createWorkspace', await owner.post('/workspaces', { name: 'Client W', clientReference: 'CR-1' }), 201).id;
    ok('updateWorkspace', await owner.patch(`/workspaces/${wsId}`, { name: 'Client W2', clientReference: null }));
    ok('deleteWorkspace', await owner.delete(`/workspaces/${wsId}`));
    created = ok('createApiKey', await owner.post('/api-keys', { name: 'Audited key', scopes: ['monitor:read'] }), 201);
    ok('revokeApiKey', await owner.delete(`/api-keys?id=${created.id}`));
    const m = await srv.member(o.organizationId, 'member');
    const member = srv.api(m.apiKey);
    memberKeyId = ok('getMe', await member.get('/me')).key.id;
    memberUserId = m.userId;
    memberEmail = ok('getMe', await member.get('/me')).user.email;
    ownerUserId = o.userId;
    ownerEmail = ok('getMe', await owner.get('/me')).user.email;
    memberMonId = ok('createMonitor', await member.post('/monitors', { name: 'By member', kind: 'http', workspaceId: ws, config }), 201).id;
    entries = await allEntries(owner);
  });

  it('records monitor create, update and delete with actor and changes', () => {
    const c = find('monitor.created', monId);
    expect(c).toMatchObject({ resourceType: 'monitor', workspaceId: ws, actor: { type: 'api_key', id: ownerKeyId } });
    expect(c.changes.name).toEqual({ from: null, to: 'Audited' });
    expect(c.changes.tags).toEqual({ from: null, to: ['a'] });
    const updates = entries.filter((e) => e.action === 'monitor.updated' && e.resourceId === monId);
    expect(updates).toHaveLength(2);
    const renamed = updates.find((e) => e.changes.name);
    expect(renamed.changes.name).toEqual({ from: 'Audited', to: 'Audited 2' });
    expect(renamed.changes).toHaveProperty('config');
    expect(renamed.actor.id).toBe(ownerKeyId);
    expect(updates.find((e) => e.changes.paused).changes.paused).toEqual({ from: false, to: true });
    const d = find('monitor.deleted', monId);
    expect(d.changes.name).toEqual({ from: 'Audited 2', to: null });
    expect(d.actor).toMatchObject({ type: 'api_key', id: ownerKeyId });
  });

  it('records workspace create, update and delete', () => {
    expect(find('workspace.created', wsId)).toMatchObject({ resourceType: 'workspace', actor: { id: ownerKeyId }, changes: { name: { from: null, to: 'Client W' } } });
    expect(find('workspace.updated', wsId).changes).toEqual({ name: { from: 'Client W', to: 'Client W2' }, clientReference: { from: 'CR-1', to: null } });
    expect(find('workspace.deleted', wsId)).toMatchObject({ actor: { id: ownerKeyId }, changes: { name: { from: 'Client W2', to: null } } });
  });

  it('records api key create and revoke', () => {
    const c = find('api_key.created', created.id);
    expect(c).toMatchObject({ resourceType: 'api_key', actor: { type: 'api_key', id: ownerKeyId } });
    expect(c.changes.name).toEqual({ from: null, to: 'Audited key' });
    const r = find('api_key.revoked', created.id);
    expect(r.actor.id).toBe(ownerKeyId);
    expect(Object.keys(r.changes).length).toBeGreaterThan(0);
  });

  it('names the key that made the change', () => {
    expect(memberKeyId).not.toBe(ownerKeyId);
    expect(find('monitor.created', memberMonId).actor).toMatchObject({ type: 'api_key', id: memberKeyId });
  });

  it('names the person behind the key: its creator, as they were when the change was made', () => {
    expect(find('monitor.created', monId).actor.user).toEqual({ id: ownerUserId, email: ownerEmail, name: null });
    expect(find('monitor.created', memberMonId).actor.user).toEqual({ id: memberUserId, email: memberEmail, name: null });
    expect(find('workspace.deleted', wsId).actor.user.id).toBe(ownerUserId);
  });

  it('never holds a token, a hash or the monitor config contents', () => {
    const text = JSON.stringify(entries);
    for (const token of [created.token, ownerToken]) {
      const hash = createHash('sha256').update(token).digest();
      for (const s of [token, hash.toString('hex'), hash.toString('base64'), hash.toString('base64url')]) expect(text).not.toContain(s);
    }
    expect(text).not.toContain('audit-secret-host');
    expect(text).not.toContain('hdr-s3cr3t');
    expect(text).not.toContain('X-Token');
  });

  it("another organisation sees none of these entries", async () => {
    const other = srv.api((await srv.org()).apiKey);
    const theirs = await allEntries(other);
    const ours = new Set(entries.map((e) => e.id));
    expect(theirs.filter((e) => ours.has(e.id))).toEqual([]);
  });
});

describe('pagination', () => {
  it('nextBefore with limit and before returns every entry once, newest first', async () => {
    const api = srv.api((await srv.org()).apiKey);
    const names: string[] = [];
    for (let i = 0; i < 7; i++) {
      names.push(`P${i}`);
      ok('createWorkspace', await api.post('/workspaces', { name: `P${i}` }), 201);
    }
    const full = await allEntries(api);
    expect(full.map((e) => e.changes.name.to)).toEqual([...names].reverse());
    for (let i = 1; i < full.length; i++) expect(Date.parse(full[i - 1].at)).toBeGreaterThanOrEqual(Date.parse(full[i].at));

    const seen: string[] = [];
    const sizes: number[] = [];
    let before: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const res: ApiResponse = await api.get(`/audit?limit=3${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      ok('listAuditEntries', res);
      sizes.push(res.body.data.length);
      seen.push(...res.body.data.map((e: any) => e.id));
      before = res.body.nextBefore;
      if (before === null) break;
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(full.map((e) => e.id));
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe('who may read it', () => {
  it.each(['free', 'pro'])('on the %s plan even the owner lacks audit_log:read: 403 naming it, not allowed in the index', async (plan) => {
    const api = srv.api((await srv.org({ plan })).apiKey);
    const res = await api.get('/audit');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'forbidden', vars: { permission: 'audit_log:read' } });
    const index = (await api.get('')).body.data;
    expect(index.routes.find((r: { path: string }) => r.path === '/audit')).toMatchObject({ allowed: false });
  });

  it.each(['business', 'enterprise'])('the %s plan is allowed', async (plan) => {
    ok('listAuditEntries', await srv.api((await srv.org({ plan })).apiKey).get('/audit'));
  });

  it.each(['viewer', 'member'])('a %s (no audit_log:read) gets 403', async (role) => {
    const o = await srv.org();
    const res = await srv.api((await srv.member(o.organizationId, role)).apiKey).get('/audit');
    expect(res.status).toBe(403);
    expect(res.body.vars.permission).toBe('audit_log:read');
  });
});

describe('DELETE /setup', () => {
  it('creates no audit entry', async () => {
    const api = srv.api((await srv.org()).apiKey);
    ok('createWorkspace', await api.post('/workspaces', { name: 'Before' }), 201);
    const before = await allEntries(api);
    expect(before).toHaveLength(1);
    expect(ok('dismissSetup', await api.delete('/setup'))).toEqual({ ok: true });
    expect(ok('getSetup', await api.get('/setup')).dismissedAt).not.toBeNull();
    expect((await allEntries(api)).map((e) => e.id)).toEqual(before.map((e) => e.id));
  });
});

describe('the person behind the actor', () => {
  it('a session names its person; a system change names none; entries keep the person as they were', async () => {
    const o = await srv.org();
    await srv.db.updateTable('users').set({ name: 'Olga Owner', password_hash: await hashPassword('a long enough password') }).where('id', '=', o.userId).execute();
    const email = (await srv.db.selectFrom('users').select('email').where('id', '=', o.userId).executeTakeFirstOrThrow()).email;
    const signedIn = await srv.api(null).post('/sessions', { email, password: 'a long enough password' });
    expect(signedIn.status).toBe(201);
    const session = srv.api(signedIn.body.data.token);
    const wsId = ok('createWorkspace', await session.post('/workspaces', { name: 'By session' }), 201).id;
    // Renaming the person later does not rewrite who made the change.
    await srv.db.updateTable('users').set({ name: 'Olga Renamed' }).where('id', '=', o.userId).execute();
    const entry = (await allEntries(srv.api(o.apiKey))).find((e) => e.action === 'workspace.created' && e.resourceId === wsId);
    expect(entry.actor).toEqual({ type: 'user', id: o.userId, name: `Olga Owner <${email}>`, user: { id: o.userId, email, name: 'Olga Owner' } });
    // Through the export too.
    const csv = await fetch(`${srv.url}/api/v1/export/audit-log?format=json`, { headers: { authorization: `Bearer ${o.apiKey}` } });
    const rows = await csv.json();
    expect(rows.find((r: { resourceId: string }) => r.resourceId === wsId)).toMatchObject({ actorType: 'user', actorUserId: o.userId, actorUserEmail: email, actorUserName: 'Olga Owner' });
    // What the service does by itself (a billing change, a confirmation link) names no person.
    await audit(srv.db, { organizationId: o.organizationId, actor: { type: 'system', id: 'web_processor', name: 'Stripe' } }, { action: 'billing.changed', resourceType: 'billing', resourceId: null, changes: {} });
    const system = (await allEntries(srv.api(o.apiKey))).find((e) => e.action === 'billing.changed');
    expect(system.actor).toEqual({ type: 'system', id: 'web_processor', name: 'Stripe', user: null });
  });
});

/**
 * The filters of GET /audit narrow on the server, before the page is cut:
 * each is checked against the whole log filtered here (the oracle), over
 * REST and Connect, alone, combined and paged with small pages.
 */
describe('filters', () => {
  let orgId: string;
  let owner: ApiClient;
  let ownerKey: string;
  let ownerKeyId: string;
  let ownerUserId: string;
  let ws: string;
  let w1: string;
  let m1: string;
  let m2: string;
  let m3: string;
  let adminKeyId: string;
  let adminUserId: string;
  let second: { id: string; token: string };
  let log: any[];

  /** Every entry matching `params`, page by page (`limit` each), with the sizes of the pages. */
  async function pages(api: ApiClient, params: Record<string, string>, limit: number) {
    const ids: string[] = [];
    const sizes: number[] = [];
    let before: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const qs = new URLSearchParams({ ...params, limit: String(limit), ...(before ? { before } : {}) });
      const res: ApiResponse = await api.get(`/audit?${qs}`);
      ok('listAuditEntries', res);
      sizes.push(res.body.data.length);
      ids.push(...res.body.data.map((e: any) => e.id));
      before = res.body.nextBefore;
      if (before === null) return { ids, sizes };
    }
    throw new Error('paging did not end');
  }

  /** One page, the whole body (checked against the contract). */
  async function page(api: ApiClient, q: string) {
    const res = await api.get(`/audit?${q}`);
    ok('listAuditEntries', res);
    return res.body as { data: any[]; nextBefore: string | null };
  }

  /** The Connect call of the same read (JSON codec); throws on a non-200 with the body. */
  async function rpc(key: string, msg: Record<string, unknown>) {
    const res = await fetch(`${srv.url}/rpc/vigil.v1.AuditService/ListAuditEntries`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(msg),
    });
    return { status: res.status, body: await res.json() as any, error: res.headers.get('vigil-error') };
  }

  const byActor = (id: string) => (e: any) => e.actor.id === id || e.actor.user?.id === id;

  beforeAll(async () => {
    const o = await srv.org();
    orgId = o.organizationId;
    ownerKey = o.apiKey;
    owner = srv.api(o.apiKey);
    ws = o.workspaceId;
    ownerUserId = o.userId;
    ownerKeyId = ok('getMe', await owner.get('/me')).key.id;
    const config = JSON.stringify({ host: '127.0.0.1', port: 9 });
    const monitor = async (api: ApiClient, name: string, workspaceId: string) =>
      ok('createMonitor', await api.post('/monitors', { name, kind: 'tcp', workspaceId, intervalSeconds: 3600, config }), 201).id as string;
    w1 = ok('createWorkspace', await owner.post('/workspaces', { name: 'Filter W1' }), 201).id;
    m1 = await monitor(owner, 'F1', ws);
    ok('updateMonitor', await owner.patch(`/monitors/${m1}`, { name: 'F1 renamed' }));
    const admin = await srv.member(orgId, 'admin');
    adminUserId = admin.userId;
    const adminApi = srv.api(admin.apiKey);
    adminKeyId = ok('getMe', await adminApi.get('/me')).key.id;
    m2 = await monitor(adminApi, 'F2', ws);
    m3 = await monitor(adminApi, 'F3', w1);
    ok('updateWorkspace', await adminApi.patch(`/workspaces/${w1}`, { name: 'Filter W1b' }));
    // A second key of the owner: its changes are the owner's too, but not the first key's.
    second = ok('createApiKey', await owner.post('/api-keys', { name: 'Second' }), 201);
    ok('createWorkspace', await srv.api(second.token).post('/workspaces', { name: 'By second key' }), 201);
    ok('updateMonitor', await srv.api(second.token).patch(`/monitors/${m1}`, { paused: true }));
    // Noise newer than everything above: a first page of 10 holds none of it.
    for (let i = 0; i < 25; i++) ok('updateWorkspace', await owner.patch(`/workspaces/${ws}`, { name: `Noise ${i}` }));
    // Spread the entries one hour apart, oldest first, so time windows have exact edges.
    const rows = await srv.db.selectFrom('audit_log').select(['id', 'seq']).where('organization_id', '=', orgId).orderBy('seq').execute();
    const t0 = Date.parse('2025-03-01T00:00:00Z');
    for (const [i, r] of rows.entries()) await srv.db.updateTable('audit_log').set({ at: new Date(t0 + i * 3_600_000) }).where('id', '=', r.id).execute();
    log = await allEntries(owner);
    expect(log.length).toBe(rows.length);
  });

  it('each filter finds entries a first unfiltered page does not hold', async () => {
    const first = (await page(owner, 'limit=10')).data.map((e: any) => e.id);
    const created = await page(owner, 'limit=10&action=monitor.created');
    expect(created.data.map((e: any) => e.resourceId)).toEqual([m3, m2, m1]);
    expect(created.nextBefore).toBeNull();
    expect(created.data.filter((e: any) => first.includes(e.id))).toEqual([]);
  });

  const cases: Array<[string, () => Record<string, string>, () => (e: any) => boolean]> = [
    ['action', () => ({ action: 'monitor.created' }), () => (e) => e.action === 'monitor.created'],
    ['action as a comma list', () => ({ action: 'monitor.created,workspace.created, api_key.created' }), () => (e) => ['monitor.created', 'workspace.created', 'api_key.created'].includes(e.action)],
    ['actor: a key id (that key only)', () => ({ actor: second.id }), () => (e) => e.actor.id === second.id],
    ['actor: a user id (their session and every key of theirs)', () => ({ actor: ownerUserId }), () => byActor(ownerUserId)],
    ['actor: a comma list', () => ({ actor: `${adminKeyId},${second.id}` }), () => (e) => [adminKeyId, second.id].includes(e.actor.id)],
    ['resourceType', () => ({ resourceType: 'monitor' }), () => (e) => e.resourceType === 'monitor'],
    ['resourceType as a comma list', () => ({ resourceType: 'monitor,api_key' }), () => (e) => ['monitor', 'api_key'].includes(e.resourceType)],
    ['resourceId', () => ({ resourceId: m1 }), () => (e) => e.resourceId === m1],
    ['from (inclusive)', () => ({ from: log[20].at }), () => (e) => Date.parse(e.at) >= Date.parse(log[20].at)],
    ['to (exclusive)', () => ({ to: log[20].at }), () => (e) => Date.parse(e.at) < Date.parse(log[20].at)],
    ['from and to', () => ({ from: log[30].at, to: log[2].at }), () => (e) => Date.parse(e.at) >= Date.parse(log[30].at) && Date.parse(e.at) < Date.parse(log[2].at)],
    ['actor, resourceType and a window combined', () => ({ actor: ownerUserId, resourceType: 'workspace', to: log[5].at }),
      () => (e) => byActor(ownerUserId)(e) && e.resourceType === 'workspace' && Date.parse(e.at) < Date.parse(log[5].at)],
    ['action and resourceId combined', () => ({ action: 'monitor.updated', resourceId: m1 }), () => (e) => e.action === 'monitor.updated' && e.resourceId === m1],
    ['empty values are no filter', () => ({ action: '', actor: '', resourceType: '', resourceId: '' }), () => () => true],
  ];

  it.each(cases)('%s: every match once, newest first, paged 2 at a time', async (_name, params, match) => {
    const want = log.filter(match()).map((e) => e.id);
    expect(want.length).toBeGreaterThan(0);
    const got = await pages(owner, params(), 2);
    expect(got.ids).toEqual(want);
    // Full pages until the last: the filter is applied before the page is cut.
    expect(got.sizes.slice(0, -1).every((n) => n === 2)).toBe(true);
    // One page big enough holds them all.
    const one = await page(owner, String(new URLSearchParams({ ...params(), limit: '200' })));
    expect({ ids: one.data.map((e: any) => e.id), next: one.nextBefore }).toEqual({ ids: want, next: null });
  });

  it('the same over Connect: filters, timestamps and the cursor', async () => {
    const want = log.filter((e) => e.resourceType === 'monitor' && Date.parse(e.at) >= Date.parse(log[30].at)).map((e) => e.id);
    const seen: string[] = [];
    let before: string | undefined;
    for (let guard = 0; guard < 20; guard++) {
      const res = await rpc(ownerKey, { resourceType: 'monitor', from: log[30].at, limit: 2, ...(before ? { before } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((e: any) => e.id));
      before = res.body.nextBefore;
      if (!before) break;
    }
    expect(seen).toEqual(want);
    const byKey = await rpc(ownerKey, { actor: second.id, action: 'workspace.created' });
    expect(byKey.body.data.map((e: any) => e.actor.id)).toEqual([second.id]);
  });

  it('a well-formed value that matches nothing is an empty page', async () => {
    const other = await srv.org();
    const otherKeyId = ok('getMe', await srv.api(other.apiKey).get('/me')).key.id;
    for (const q of ['action=monitor.exploded', `actor=${otherKeyId}`, `actor=${other.userId}`, 'resourceType=nothing_here', 'resourceId=mon_nope', 'from=2030-01-01T00:00:00Z']) {
      expect({ q, body: await page(owner, q) }).toEqual({ q, body: { data: [], nextBefore: null } });
    }
  });

  const bad: Array<[string, string, RegExp]> = [
    ['action=monitor%20created', 'action', /is not an action name/],
    ['action=monitor.created,,monitor.deleted', 'action', /empty item/],
    ['action=monitor.created,', 'action', /empty item/],
    [`action=${Array.from({ length: 21 }, (_, i) => `a.v${i}`).join(',')}`, 'action', /21 items; at most 20/],
    ['actor=usr%20x', 'actor', /is not a user, API key or service id/],
    ['actor=a;drop', 'actor', /is not a user, API key or service id/],
    ['resourceType=Monitor', 'resourceType', /is not a resource type/],
    ['resourceId=%20mon_1', 'resourceId', /spaces/],
    ['from=yesterday', 'from', /date-time/],
    ['to=2025-03-01', 'to', /date-time/],
    ['from=2025-03-02T00:00:00Z&to=2025-03-01T00:00:00Z', 'from', /must be before to/],
    ['from=2025-03-01T00:00:00Z&to=2025-03-01T00:00:00Z', 'from', /must be before to/],
    [`resourceId=${'x'.repeat(257)}`, 'resourceId', /./],
  ];

  it.each(bad)('%s is 400 invalid_query naming %s', async (q, field, reason) => {
    const res = await owner.get(`/audit?${q}`);
    expect({ status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ status: 400, code: 'invalid_query', field });
    expect(res.body.details.reason).toMatch(reason);
  });

  it('a bad value over Connect is invalid_argument carrying the same code and field', async () => {
    const res = await rpc(ownerKey, { action: 'not an action' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_argument');
    expect(JSON.parse(res.error!)).toMatchObject({ code: 'invalid_query', details: { field: 'action' } });
    const window = await rpc(ownerKey, { from: '2025-03-02T00:00:00Z', to: '2025-03-01T00:00:00Z' });
    expect(JSON.parse(window.error!)).toMatchObject({ code: 'invalid_query', details: { field: 'from' } });
  });

  it('an unknown cursor is still invalid_cursor, filters or not', async () => {
    const res = await owner.get('/audit?action=monitor.created&before=aud_nope');
    expect({ status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ status: 400, code: 'invalid_cursor', field: 'before' });
  });

  it('a confined key sees only its workspaces\' entries, filtered or not; its cursor from elsewhere is unknown', async () => {
    const confined = ok('createApiKey', await owner.post('/api-keys', { name: 'Confined reader', scopes: ['audit_log:read'], workspaceIds: [w1] }), 201);
    const api = srv.api(confined.token);
    const mine = (e: any) => e.workspaceId === w1;
    for (const params of [{}, { action: 'monitor.created' }, { actor: adminUserId }, { resourceType: 'monitor' }, { resourceId: m2 }, { actor: adminKeyId, from: log[log.length - 6].at }]) {
      const want = log.filter((e) => mine(e)
        && (!('action' in params) || e.action === params.action)
        && (!('actor' in params) || byActor(params.actor as string)(e))
        && (!('resourceType' in params) || e.resourceType === params.resourceType)
        && (!('resourceId' in params) || e.resourceId === params.resourceId)
        && (!('from' in params) || Date.parse(e.at) >= Date.parse(params.from as string))).map((e) => e.id);
      expect({ params, ids: (await pages(api, params as Record<string, string>, 1)).ids }).toEqual({ params, ids: want });
    }
    expect(log.filter(mine).map((e) => e.resourceId)).toContain(m3);
    // Another workspace's entry as a cursor is as unknown as a made-up one, with a filter too.
    const outside = log.find((e) => e.resourceId === m1)!;
    const res = await api.get(`/audit?action=monitor.created&before=${outside.id}`);
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'invalid_cursor' });
    // Over Connect the same.
    const viaRpc = await rpc(confined.token, { action: 'monitor.created' });
    expect(viaRpc.body.data.map((e: any) => e.resourceId)).toEqual([m3]);
  });

  it('a key without audit_log:read is refused with filters as without', async () => {
    const scoped = ok('createApiKey', await owner.post('/api-keys', { name: 'Monitors only', scopes: ['monitor:read'] }), 201);
    const res = await srv.api(scoped.token).get('/audit?action=monitor.created');
    expect({ status: res.status, permission: res.body.vars?.permission }).toEqual({ status: 403, permission: 'audit_log:read' });
    const free = srv.api((await srv.org({ plan: 'free' })).apiKey);
    const refused = await free.get(`/audit?actor=${ownerUserId}`);
    expect({ status: refused.status, permission: refused.body.vars?.permission }).toEqual({ status: 403, permission: 'audit_log:read' });
  });
});
