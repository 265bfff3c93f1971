import createClient from 'openapi-fetch';
import type { paths } from '../gen/openapi';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startSmtpServer, type SmtpReceiver } from './support/receivers';

// Members and invitations through the API: listing, inviting by e-mail (a
// real message on a local SMTP server), accepting on the invitation page,
// roles (ranked, the last owner kept), removal with the member's keys and
// personal channels, and the plan's member cap.

let server: TestServer;
let smtp: SmtpReceiver;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let owner: ApiClient;

const linkIn = (text: string) => /https?:\/\/\S+\/invitations\/inv_[A-Za-z0-9_-]+/.exec(text)?.[0] ?? null;

async function invite(api: ApiClient, email: string, role: string, workspaceIds?: string[]) {
  return ok('inviteMember', await api.post('/members', { email, role, ...(workspaceIds ? { workspaceIds } : {}) }), 201);
}

async function accept(link: string, body: Record<string, string>, json = true) {
  const res = await fetch(link, {
    method: 'POST',
    headers: json ? { 'content-type': 'application/json', accept: 'application/json' } : { 'content-type': 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
  });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  server = await startTestServer({ SMTP_URL: smtp.url, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business', name: 'Acme Ops' });
  owner = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await smtp.close();
});

test('the list: members with role, confinement, joined and last seen; pending invitations apart', async () => {
  const data = ok('listMembers', await owner.get('/members'));
  expect(data.invitations).toEqual([]);
  expect(data.members).toEqual([expect.objectContaining({ userId: org.userId, role: 'owner', workspaceIds: null, createdAt: expect.any(String), lastSeenAt: expect.any(String) })]);
});

test('an invitation: one e-mail with a one-time link, no account until accepted; accepting makes the member', async () => {
  const inv = await invite(owner, 'Dana@Example.test', 'member', [org.workspaceId]);
  expect(inv).toMatchObject({ email: 'Dana@example.test', role: 'member', workspaceIds: [org.workspaceId], invitedBy: expect.any(String) });
  expect(new Date(inv.expiresAt).getTime() - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
  const [mail] = await smtp.waitFor(1);
  expect(mail.to).toEqual(['Dana@example.test']);
  expect(mail.subject).toContain('Acme Ops');
  const link = linkIn(mail.text)!;
  expect(link.startsWith(`${server.url}/invitations/inv_`)).toBe(true);
  expect(await server.db.selectFrom('users').select('id').where('email', 'ilike', 'dana@example.test').execute()).toEqual([]);
  const listed = ok('listMembers', await owner.get('/members'));
  expect(listed.invitations).toEqual([expect.objectContaining({ id: inv.id, email: 'Dana@example.test' })]);
  expect(listed.members).toHaveLength(1);

  // The page: who invites where, a form for a newcomer; strict headers, no token in a cacheable answer.
  const page = await fetch(link);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('Join Acme Ops on Vigil');
  expect(html).toContain('name="password"');
  expect(page.headers.get('content-security-policy')).toContain("script-src 'none'");
  expect(page.headers.get('cache-control')).toBe('private, no-store');

  // Bad input says what is wrong and keeps the invitation.
  const short = await accept(link, { name: 'Dana', password: 'short' });
  expect(short.status).toBe(400);
  expect(JSON.parse(short.text)).toMatchObject({ code: 'invalid_field', details: { field: 'password' } });
  const formError = await accept(link, { name: '', password: 'long enough pass' }, false);
  expect(formError.status).toBe(400);
  expect(formError.text).toContain('Your name');

  const done = await accept(link, { name: 'Dana Scully', password: 'trust no one 1013' });
  expect(done.status).toBe(201);
  const joined = JSON.parse(done.text).data;
  expect(joined).toMatchObject({ organizationId: org.organizationId, role: 'member' });
  const stored = await server.db.selectFrom('users').select(['name', 'password_hash']).where('id', '=', joined.userId).executeTakeFirstOrThrow();
  expect(stored.name).toBe('Dana Scully');
  expect(stored.password_hash).toMatch(/^scrypt\$/);
  expect(stored.password_hash).not.toContain('trust no one');
  // One use.
  expect((await accept(link, { name: 'X', password: 'another password' })).status).toBe(404);
  expect((await fetch(link)).status).toBe(404);
  const after = ok('listMembers', await owner.get('/members'));
  expect(after.invitations).toEqual([]);
  expect(after.members.find((m: any) => m.id === joined.membershipId)).toMatchObject({ email: 'Dana@example.test', name: 'Dana Scully', role: 'member', workspaceIds: [org.workspaceId], lastSeenAt: null });
  // The colleague counts on the setup checklist; the audit log says who joined, never the password.
  expect(ok('getSetup', await owner.get('/setup')).hasColleague).toBe(true);
  const audit = JSON.stringify((await owner.get('/audit?limit=50')).body);
  expect(audit).toContain('member.invited');
  expect(audit).toContain('member.joined');
  expect(audit).not.toContain('trust no one');
  expect(audit).not.toContain(link.split('/invitations/')[1]);
});

test("acceptInvitation: the contract's operation for the link, called through a client generated from the contract (no credential)", async () => {
  const inv = await invite(owner, 'fox@example.test', 'viewer');
  const link = linkIn((await until('the mail', async () => smtp.messages.find((m) => m.to.includes('fox@example.test'))))!.text)!;
  const token = link.split('/invitations/')[1];
  const vigil = createClient<paths>({ baseUrl: `${server.url}/api/v1` });
  // Bad input names the field and keeps the invitation; an unknown token is 404.
  const short = await vigil.POST('/invitations/accept', { body: { token, name: 'Fox', password: 'short' } });
  expect(short.response.status).toBe(400);
  expect(short.error).toMatchObject({ code: 'invalid_field', details: { field: 'password' } });
  const unknown = await vigil.POST('/invitations/accept', { body: { token: 'inv_nope', name: 'Fox', password: 'long enough pass' } });
  expect(unknown.response.status).toBe(404);
  expect(unknown.error?.code).toBe('invitation_not_found');
  const tooLong = await vigil.POST('/invitations/accept', { body: { token, name: 'x'.repeat(81), password: 'long enough pass' } });
  expect(tooLong.error?.details?.field).toBe('name');

  const done = await vigil.POST('/invitations/accept', { body: { token, name: 'Fox Mulder', password: 'i want to believe' } });
  expect(done.response.status).toBe(201);
  expect(ok('acceptInvitation', { status: 201, headers: done.response.headers, body: done.data }, 201)).toEqual({
    organizationId: org.organizationId, membershipId: expect.stringMatching(/^mem_/), userId: expect.stringMatching(/^usr_/), role: 'viewer', signedIn: null,
  });
  expect(ok('listMembers', await owner.get('/members')).invitations.find((i: { id: string }) => i.id === inv.id)).toBeUndefined();
  // One use: the link and the operation both refuse it now.
  expect((await vigil.POST('/invitations/accept', { body: { token } })).response.status).toBe(404);
  expect((await fetch(link)).status).toBe(404);
  // The same through Connect.
  const rpc = await fetch(`${server.url}/rpc/vigil.v1.MemberService/AcceptInvitation`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  expect(rpc.status).toBe(404);
});

test('inviting again replaces the pending invitation; a member is 409; withdrawing kills the link', async () => {
  const first = await invite(owner, 'eve@example.test', 'viewer');
  const before = smtp.messages.length;
  const second = await invite(owner, 'EVE@example.test', 'admin');
  await smtp.waitFor(before + 1);
  const firstLink = linkIn(smtp.messages[before - 1].text)!;
  const secondLink = linkIn(smtp.messages[before].text)!;
  expect((await fetch(firstLink)).status).toBe(404);
  expect((await fetch(secondLink)).status).toBe(200);
  const pending = ok('listMembers', await owner.get('/members')).invitations;
  expect(pending.map((i: any) => i.id)).toEqual([second.id]);
  expect(pending[0].id).not.toBe(first.id);

  const again = await owner.post('/members', { email: 'dana@example.test', role: 'viewer' });
  expect(again.status).toBe(409);
  expect(again.body.code).toBe('already_member');

  ok('deleteInvitation', await owner.delete(`/invitations/${second.id}`));
  expect((await fetch(secondLink)).status).toBe(404);
  expect((await owner.delete(`/invitations/${second.id}`)).status).toBe(404);
});

test('bad input: a clear 400 naming the field; an unknown workspace 404; a refused message keeps nothing', async () => {
  const badEmail = await owner.post('/members', { email: 'not-an-address', role: 'member' });
  expect(badEmail.status).toBe(400);
  expect(badEmail.body.details.field).toBe('email');
  const badRole = await owner.post('/members', { email: 'x@example.test', role: 'emperor' });
  expect(badRole.status).toBe(400);
  expect(badRole.body.details.field).toBe('role');
  const badWs = await owner.post('/members', { email: 'x@example.test', role: 'member', workspaceIds: ['ws_nope'] });
  expect(badWs.status).toBe(404);
  expect(badWs.body.details.field).toBe('workspaceIds');
  smtp.rejectNext('550 5.1.1 mailbox unavailable');
  const refused = await owner.post('/members', { email: 'bounce@example.test', role: 'member' });
  expect(refused.status).toBe(502);
  expect(refused.body.code).toBe('invitation_not_sent');
  expect(ok('listMembers', await owner.get('/members')).invitations.map((i: any) => i.email)).not.toContain('bounce@example.test');
});

test('roles: nobody grants above their own role; the last owner stays; a demotion narrows the member\'s keys at once', async () => {
  const admin = await server.member(org.organizationId, 'admin');
  const adminApi = server.api(admin.apiKey);
  const ownerId = ok('listMembers', await owner.get('/members')).members.find((m: any) => m.role === 'owner').id;
  const grant = await adminApi.post('/members', { email: 'boss@example.test', role: 'owner' });
  expect(grant.status).toBe(403);
  expect(grant.body.code).toBe('role_above_own');
  expect((await adminApi.patch(`/members/${ownerId}`, { role: 'viewer' })).status).toBe(403);
  const lastOwner = await owner.patch(`/members/${ownerId}`, { role: 'admin' });
  expect(lastOwner.status).toBe(409);
  expect(lastOwner.body.code).toBe('last_owner');
  expect((await owner.delete(`/members/${ownerId}`)).body.code).toBe('last_owner');

  // The admin's key can create a workspace; demoted to viewer, the same key cannot, from the next request.
  expect((await adminApi.post('/workspaces', { name: 'Before demotion' })).status).toBe(201);
  ok('updateMember', await owner.patch(`/members/${admin.membershipId}`, { role: 'viewer' }));
  const refused = await adminApi.post('/workspaces', { name: 'After demotion' });
  expect(refused.status).toBe(403);
  expect(ok('getMe', await adminApi.get('/me')).membership.role).toBe('viewer');
  expect((await owner.patch(`/members/mem_nope`, { role: 'viewer' })).status).toBe(404);
  expect((await owner.patch(`/members/${admin.membershipId}`, { role: 'king' })).status).toBe(400);
  // A viewer's key reads members but cannot invite.
  expect((await adminApi.get('/members')).status).toBe(200);
  expect((await adminApi.post('/members', { email: 'y@example.test', role: 'viewer' })).status).toBe(403);
});

test('removal: the member\'s keys stop working and personal channels go in the same operation; shared channels stay', async () => {
  const m = await server.member(org.organizationId, 'member');
  const api = server.api(m.apiKey);
  const personal = ok('createChannel', await api.post('/channels', { kind: 'email', name: 'My inbox', target: 'me@example.test', workspaceId: null }), 201);
  const shared = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'Team hook', target: 'https://hooks.example.test/x', workspaceId: null }), 201);
  const made = ok('createApiKey', await api.post('/api-keys', { name: 'ci', scopes: [], workspaceIds: [] }), 201);
  expect((await server.api(made.token).get('/monitors')).status).toBe(200);

  ok('removeMember', await owner.delete(`/members/${m.membershipId}`));
  expect((await api.get('/monitors')).status).toBe(401);
  expect((await server.api(made.token).get('/monitors')).status).toBe(401);
  const channels = ok('listChannels', await owner.get('/channels'));
  expect(channels.find((c: any) => c.id === personal.id)).toBeUndefined();
  expect(channels.find((c: any) => c.id === shared.id)).toMatchObject({ name: 'Team hook', owner: null, enabled: true });
  expect(ok('listMembers', await owner.get('/members')).members.find((x: any) => x.id === m.membershipId)).toBeUndefined();
  expect((await owner.delete(`/members/${m.membershipId}`)).status).toBe(404);
});

test('someone with an account joins another organisation with one click; a confined inviter confines', async () => {
  const other = await server.org({ plan: 'business', name: 'Second Org' });
  const otherOwner = server.api(other.apiKey);
  const before = smtp.messages.length;
  await invite(otherOwner, 'dana@example.test', 'viewer', [other.workspaceId]);
  await smtp.waitFor(before + 1);
  const link = linkIn(smtp.messages[before].text)!;
  const html = await (await fetch(link)).text();
  expect(html).toContain('You already have a Vigil account');
  expect(html).not.toContain('name="password"');
  const done = await accept(link, {}, false);
  expect(done.status).toBe(201);
  expect(done.text).toContain('Welcome to Second Org');
  const members = ok('listMembers', await otherOwner.get('/members')).members;
  expect(members.find((x: any) => x.email === 'Dana@example.test')).toMatchObject({ role: 'viewer', workspaceIds: [other.workspaceId] });

  // A key confined to a workspace must confine whom it invites.
  const confined = server.api((await server.member(org.organizationId, 'admin', [org.workspaceId])).apiKey);
  const unconfined = await confined.post('/members', { email: 'z@example.test', role: 'viewer' });
  expect(unconfined.status).toBe(400);
  expect(unconfined.body.details.field).toBe('workspaceIds');
});

test('the plan caps members plus pending invitations: 402 limit_reached', async () => {
  const free = await server.org({ plan: 'free' });
  const api = server.api(free.apiKey);
  await invite(api, 'a@example.test', 'viewer');
  await invite(api, 'b@example.test', 'viewer');
  const over = await api.post('/members', { email: 'c@example.test', role: 'viewer' });
  expect(over.status).toBe(402);
  expect(over.body).toMatchObject({ code: 'limit_reached', vars: { plan: 'free', resource: 'members', limit: '3', current: '3' } });
  await until('the mails', async () => smtp.messages.filter((x) => x.to[0] === 'b@example.test').length > 0);
});
