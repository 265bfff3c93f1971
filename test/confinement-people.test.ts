// Workspace confinement of people and keys (issue 24, items 1, 2 and 5):
// a caller confined to ws1 — a key minted with workspaceIds [ws1], or the
// session of an admin whose membership is confined — sees and changes only
// members, invitations and keys within its workspaces; organisation-level
// changes are 403 naming the permission; outside records answer like made-up ids.
import { setPassword } from '../src/domain/organizations';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

let srv: TestServer;
let owner: ApiClient;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let ws1: string;
let ws2: string;

/** A ws1-confined key minted by the owner, and the session of an admin confined to `ws`. */
let confinedKey: ApiClient;

async function confinedAdminSession(ws: string): Promise<{ api: ApiClient; membershipId: string }> {
  const m = await srv.member(org.organizationId, 'admin', [ws]);
  const email = (await srv.db.selectFrom('users').select('email').where('id', '=', m.userId).executeTakeFirstOrThrow()).email;
  await setPassword(srv.db, email, 'a long enough password 1');
  const res = await srv.api(null).post('/sessions', { email, password: 'a long enough password 1' });
  expect(res.status).toBe(201);
  return { api: srv.api(res.body.data.token), membershipId: m.membershipId };
}

beforeAll(async () => {
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await srv.org();
  owner = srv.api(org.apiKey);
  ws1 = org.workspaceId;
  ws2 = (await owner.post('/workspaces', { name: 'Second' })).body.data.id;
  const k = await owner.post('/api-keys', { name: 'ws1 only', workspaceIds: [ws1] });
  expect(k.status).toBe(201);
  confinedKey = srv.api(k.body.data.token);
});
afterAll(async () => { await srv?.close(); });

/** A fresh person of `role` with reach `workspaceIds` (null: the whole organisation). */
function person(role: string, workspaceIds?: string[]) {
  return srv.member(org.organizationId, role, workspaceIds);
}

function expectRefusedNaming(res: { status: number; body: any }, permission: string) {
  expect(res.status).toBe(403);
  expect(res.body.vars.permission).toBe(permission);
  expect(res.body.error).toContain(permission);
}

/** The same answer as for a made-up id of the same kind (status and the whole body). */
async function expectLikeMadeUp(res: { status: number; body: any }, madeUp: () => Promise<{ status: number; body: any }>) {
  const other = await madeUp();
  expect(res.status).toBe(404);
  expect(res.body).toEqual(other.body);
}

describe.each([
  ['a key confined to ws1', () => Promise.resolve({ api: confinedKey, ws: () => ws1, outside: () => ws2 })],
  ['the session of an admin confined to ws2', async () => ({ api: (await confinedAdminSession(ws2)).api, ws: () => ws2, outside: () => ws1 })],
])('%s', (_name, make) => {
  let api: ApiClient;
  let mine: string;
  let outside: string;
  beforeAll(async () => {
    const c = await make();
    api = c.api; mine = c.ws(); outside = c.outside();
  });

  test('cannot make anyone owner, demote an unconfined admin, or remove an unconfined member', async () => {
    const unconfined = await person('member');
    const admin = await person('admin');
    expectRefusedNaming(await api.patch(`/members/${unconfined.membershipId}`, { role: 'owner' }), 'member:update_role');
    expectRefusedNaming(await api.patch(`/members/${admin.membershipId}`, { role: 'viewer' }), 'member:update_role');
    expectRefusedNaming(await api.delete(`/members/${unconfined.membershipId}`), 'member:remove');
    const members = (await owner.get('/members')).body.data.members;
    expect(members.find((m: any) => m.id === unconfined.membershipId).role).toBe('member');
    expect(members.find((m: any) => m.id === admin.membershipId).role).toBe('admin');
  });

  test('cannot grant owner or admin even within its workspaces; may change a member within them', async () => {
    const within = await person('viewer', [mine]);
    expectRefusedNaming(await api.patch(`/members/${within.membershipId}`, { role: 'admin' }), 'member:update_role');
    expect((await api.patch(`/members/${within.membershipId}`, { role: 'member' })).status).toBe(200);
    expect((await api.delete(`/members/${within.membershipId}`)).status).toBe(200);
    expectRefusedNaming(await api.post('/members', { email: `adm-${Date.now()}@example.test`, role: 'admin', workspaceIds: [mine] }), 'member:invite');
  });

  test('a member confined elsewhere does not exist for it', async () => {
    const there = await person('member', [outside]);
    await expectLikeMadeUp(await api.patch(`/members/${there.membershipId}`, { role: 'viewer' }), () => api.patch('/members/mem_doesnotexist000000', { role: 'viewer' }));
    await expectLikeMadeUp(await api.delete(`/members/${there.membershipId}`), () => api.delete('/members/mem_doesnotexist000000'));
    const listed = (await api.get('/members')).body.data.members.map((m: any) => m.id);
    expect(listed).not.toContain(there.membershipId);
  });

  test("cannot revoke the owner's unconfined key or a key confined elsewhere", async () => {
    const keys = (await owner.get('/api-keys')).body.data;
    const ownersKey = keys.find((k: any) => k.owner.userId === org.userId && k.workspaceIds === null);
    expectRefusedNaming(await api.delete(`/api-keys?id=${ownersKey.id}`), 'api_key:manage');
    expect((await owner.get('/me')).status).toBe(200);
    const elsewhere = (await owner.post('/api-keys', { name: 'elsewhere', workspaceIds: [outside] })).body.data;
    await expectLikeMadeUp(await api.delete(`/api-keys?id=${elsewhere.id}`), () => api.delete('/api-keys?id=key_doesnotexist000000'));
    expect((await srv.api(elsewhere.token).get('/me')).status).toBe(200);
  });

  test('may revoke a key within its workspaces', async () => {
    const within = (await owner.post('/api-keys', { name: 'within', workspaceIds: [mine] })).body.data;
    expect((await api.delete(`/api-keys?id=${within.id}`)).status).toBe(200);
    expect((await srv.api(within.token).get('/me')).status).toBe(401);
  });

  test('cannot withdraw an invitation elsewhere or to the whole organisation; may withdraw one within', async () => {
    const there = (await owner.post('/members', { email: `there-${Date.now()}@example.test`, role: 'member', workspaceIds: [outside] })).body.data;
    const whole = (await owner.post('/members', { email: `whole-${Date.now()}@example.test`, role: 'member' })).body.data;
    const within = (await owner.post('/members', { email: `within-${Date.now()}@example.test`, role: 'member', workspaceIds: [mine] })).body.data;
    await expectLikeMadeUp(await api.delete(`/invitations/${there.id}`), () => api.delete('/invitations/inv_doesnotexist000000'));
    expectRefusedNaming(await api.delete(`/invitations/${whole.id}`), 'member:invite');
    expect((await api.delete(`/invitations/${within.id}`)).status).toBe(200);
    const left = (await owner.get('/members')).body.data.invitations.map((i: any) => i.id);
    expect(left).toEqual(expect.arrayContaining([there.id, whole.id]));
    expect(left).not.toContain(within.id);
    // Inviting the same address again would replace (withdraw) the invitation elsewhere.
    const again = await api.post('/members', { email: there.email, role: 'member', workspaceIds: [mine] });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('already_invited');
  });

  test('lists name no workspace outside its own', async () => {
    await person('member', [mine, outside]);
    await owner.post('/api-keys', { name: 'both', workspaceIds: [mine, outside] });
    await owner.post('/members', { email: `both-${Date.now()}@example.test`, role: 'viewer', workspaceIds: [mine, outside] });
    const members = await api.get('/members');
    const keys = await api.get('/api-keys');
    expect(members.status).toBe(200);
    expect(keys.status).toBe(200);
    expect(JSON.stringify(members.body)).not.toContain(outside);
    expect(JSON.stringify(keys.body)).not.toContain(outside);
    // The two-workspace records are shown, narrowed to the caller's workspace.
    expect(members.body.data.members.some((m: any) => JSON.stringify(m.workspaceIds) === JSON.stringify([mine]))).toBe(true);
    expect(members.body.data.invitations.some((i: any) => JSON.stringify(i.workspaceIds) === JSON.stringify([mine]))).toBe(true);
    const search = await api.get(`/search?q=both&type=api_key`);
    expect(JSON.stringify(search.body)).not.toContain(outside);
  });

  test('organisation-level changes are 403 naming the permission', async () => {
    expectRefusedNaming(await api.post('/workspaces', { name: 'Mine now' }), 'workspace:update');
    expectRefusedNaming(await api.delete(`/workspaces/${mine}`), 'workspace:update');
    expectRefusedNaming(await api.post('/incident-feed'), 'notification_channel:manage');
    expectRefusedNaming(await api.post('/channels', { kind: 'webhook', name: 'org-wide', target: 'https://example.com/hook', workspaceId: null }), 'notification_channel:manage');
    expectRefusedNaming(await api.post('/agents', { name: 'org-wide agent', workspaceId: null }), 'agent:enroll');
    expectRefusedNaming(await api.delete('/setup'), 'org:update');
    expect((await owner.get('/setup')).body.data.dismissedAt).toBeNull();
  });
});

test('an unconfined owner still sees every workspace of every person and key', async () => {
  const both = await person('member', [ws1, ws2]);
  const members = (await owner.get('/members')).body.data.members;
  expect(members.find((m: any) => m.id === both.membershipId).workspaceIds).toEqual([ws1, ws2]);
  const made = (await owner.post('/api-keys', { name: 'two', workspaceIds: [ws1, ws2] })).body.data;
  expect(made.workspaceIds).toEqual([ws1, ws2]);
});
