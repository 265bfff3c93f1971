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
