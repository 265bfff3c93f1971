import { addMember, setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { ApiClient, startTestServer, type TestServer } from './support/harness';
import { startSmtpServer, type SmtpReceiver } from './support/receivers';

// Signing in: sessions by bearer token or cookie (with an Origin check on
// cookie writes), the session-only operations, organisations and switching,
// signing out, changing and resetting a password (a real e-mail), sign-in
// throttling, and self-service sign-up behind SIGNUP.

let server: TestServer;
let smtp: SmtpReceiver;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let email: string;
const PASSWORD = 'first password 123';

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/api/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}

async function signIn(address = email, password = PASSWORD) {
  const res = await post('/sessions', { email: address, password });
  expect(res.status).toBe(201);
  return res;
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  // WORKER: the reset mail goes through the job queue. TRUST_PROXY: tests name client addresses with X-Forwarded-For.
  server = await startTestServer({ SMTP_URL: smtp.url, SIGNUP: 'open', WORKER: 'true', TRUST_PROXY: 'loopback', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business', name: 'First Org' });
  email = ok('getMe', await server.api(org.apiKey).get('/me')).user.email;
  await setPassword(server.db, email, PASSWORD);
});
afterAll(async () => {
  await server.close();
  await smtp.close();
});

test('sign in: a vs_ token in the body and an HttpOnly SameSite cookie; any failure is the same 401', async () => {
  const res = await signIn(email.toUpperCase());
  const grant = res.body.data;
  expect(grant.token).toMatch(/^vs_[A-Za-z0-9_-]{43}$/);
  expect(grant).toMatchObject({ organizationId: org.organizationId, session: { current: true, ipAddress: expect.any(String) } });
  expect(res.headers.get('set-cookie')).toMatch(new RegExp(`^vigil_session=${grant.token}; Path=/; Max-Age=2592000; HttpOnly; SameSite=Lax$`));
  const stored = await server.db.selectFrom('sessions').select('token_hash').where('id', '=', grant.session.id).executeTakeFirstOrThrow();
  expect(stored.token_hash.toString('utf8')).not.toContain(grant.token);

  const wrong = await post('/sessions', { email, password: 'not the password' });
  const unknown = await post('/sessions', { email: 'nobody@example.test', password: PASSWORD });
  expect(wrong.status).toBe(401);
  expect(unknown.status).toBe(401);
  expect(wrong.body).toEqual(unknown.body);
  expect(wrong.body.code).toBe('sign_in_failed');
  const missing = await post('/sessions', { email });
  expect(missing.status).toBe(400);
  expect(missing.body.details.field).toBe('password');
});

test('a session acts with its membership\'s role, and alone may call the session-only operations', async () => {
  const { token } = (await signIn()).body.data;
  const session = new ApiClient(server.url, token);
  const me = ok('getMe', await session.get('/me'));
  expect(me).toMatchObject({ user: { email }, organization: { id: org.organizationId }, membership: { role: 'owner' }, key: null });
  expect(me.organizations).toEqual([{ id: org.organizationId, name: 'First Org', role: 'owner', active: true }]);
  expect(ok('getMe', await server.api(org.apiKey).get('/me')).organizations).toBeUndefined();
  expect(ok('createWorkspace', await session.post('/workspaces', { name: 'Made by a session' }), 201).name).toBe('Made by a session');
  const sessions = ok('listSessions', await session.get('/sessions'));
  expect(sessions.filter((s: any) => s.current)).toHaveLength(1);
  for (const path of ['/sessions', '/organizations']) {
    const byKey = await server.api(org.apiKey).get(path);
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe('session_required');
  }
  // The audit log names the person.
  const audit = ok('listAuditEntries', await session.get('/audit?limit=5'));
  expect(JSON.stringify(audit)).toContain(email);
});

test('the cookie: reads work; a write needs an Origin of Vigil\'s own host (CSRF)', async () => {
  const { token } = (await signIn()).body.data;
  const cookie = `other=1; vigil_session=${token}`;
  expect((await fetch(`${server.url}/api/v1/monitors`, { headers: { cookie } })).status).toBe(200);
  const bare = await post('/workspaces', { name: 'No origin' }, { cookie });
  expect(bare.status).toBe(403);
  expect(bare.body.code).toBe('csrf_refused');
  expect((await post('/workspaces', { name: 'Evil' }, { cookie, origin: 'https://evil.example' })).status).toBe(403);
  expect((await post('/workspaces', { name: 'Same site' }, { cookie, origin: server.url })).status).toBe(201);
  expect((await post('/workspaces', { name: 'By referer' }, { cookie, referer: `${server.url}/dashboard` })).status).toBe(201);
  // A bearer token needs no Origin (no browser sends it by itself).
  expect((await post('/workspaces', { name: 'Bearer' }, { authorization: `Bearer ${token}` })).status).toBe(201);
  expect((await fetch(`${server.url}/api/v1/monitors`, { headers: { cookie: 'vigil_session=vs_forged' } })).status).toBe(401);
});

test('organisations: the list, switching moves every session, a non-member organisation is 404', async () => {
  const second = await server.org({ plan: 'pro', name: 'Second Org' });
  await addMember(server.db, { organizationId: second.organizationId, email, role: 'viewer' });
  const a = new ApiClient(server.url, (await signIn()).body.data.token);
  const b = new ApiClient(server.url, (await signIn()).body.data.token);
  const list = ok('listOrganizations', await a.get('/organizations'));
  expect(list).toEqual(expect.arrayContaining([
    { id: org.organizationId, name: 'First Org', role: 'owner', active: true },
    { id: second.organizationId, name: 'Second Org', role: 'viewer', active: false },
  ]));
  const switched = ok('setActiveOrganization', await a.put('/organizations/active', { organizationId: second.organizationId }));
  expect(switched).toEqual({ id: second.organizationId, name: 'Second Org', role: 'viewer', active: true });
  for (const s of [a, b]) {
    const me = ok('getMe', await s.get('/me'));
    expect(me.organization.id).toBe(second.organizationId);
    expect(me.membership.role).toBe('viewer');
  }
  expect((await b.post('/workspaces', { name: 'viewer cannot' })).status).toBe(403);
  const stranger = await server.org({ name: 'Not mine' });
  expect((await a.put('/organizations/active', { organizationId: stranger.organizationId })).status).toBe(404);
  expect((await server.api(org.apiKey).put('/organizations/active', { organizationId: org.organizationId })).body.code).toBe('session_required');
  ok('setActiveOrganization', await a.put('/organizations/active', { organizationId: org.organizationId }));
});

test('signing out clears the cookie and ends the token; another session of mine can be ended, nobody else\'s', async () => {
  const first = (await signIn()).body.data;
  const second = (await signIn()).body.data;
  const out = await fetch(`${server.url}/api/v1/sessions/current`, { method: 'DELETE', headers: { authorization: `Bearer ${first.token}` } });
  expect(out.status).toBe(200);
  expect(await out.json()).toEqual({ data: { id: first.session.id, deleted: true, current: true } });
  expect(out.headers.get('set-cookie')).toMatch(/^vigil_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax/);
  expect((await new ApiClient(server.url, first.token).get('/me')).status).toBe(401);
  const s2 = new ApiClient(server.url, second.token);
  const third = (await signIn()).body.data;
  expect(ok('revokeSession', await s2.delete(`/sessions/${third.session.id}`))).toEqual({ id: third.session.id, deleted: true, current: false });
  expect((await new ApiClient(server.url, third.token).get('/me')).status).toBe(401);
  expect((await s2.delete('/sessions/ses_not_mine')).status).toBe(404);
});

test('changing the password needs the current one and ends my other sessions', async () => {
  const keep = new ApiClient(server.url, (await signIn()).body.data.token);
  const other = new ApiClient(server.url, (await signIn()).body.data.token);
  const wrong = await keep.put('/me/password', { currentPassword: 'nope nope nope', newPassword: 'second password 456' });
  expect(wrong.status).toBe(400);
  expect(wrong.body).toMatchObject({ code: 'password_incorrect', details: { field: 'currentPassword' } });
  const short = await keep.put('/me/password', { currentPassword: PASSWORD, newPassword: 'short' });
  expect(short.body.details.field).toBe('newPassword');
  const done = ok('changePassword', await keep.put('/me/password', { currentPassword: PASSWORD, newPassword: 'second password 456' }));
  expect(done.ok).toBe(true);
  expect(done.otherSessionsEnded).toBeGreaterThanOrEqual(1);
  expect((await keep.get('/me')).status).toBe(200);
  expect((await other.get('/me')).status).toBe(401);
  expect((await post('/sessions', { email, password: PASSWORD })).status).toBe(401);
  await signIn(email, 'second password 456');
  const audit = JSON.stringify((await keep.get('/audit?limit=20')).body);
  expect(audit).toContain('user.password_changed');
  expect(audit).not.toContain('second password 456');
  await setPassword(server.db, email, PASSWORD);
});

test('a forgotten password: the same answer for any address, one e-mailed link, one use; every session ends', async () => {
  const session = new ApiClient(server.url, (await signIn()).body.data.token);
  const before = smtp.messages.length;
  const unknown = await post('/password-reset', { email: 'nobody@example.test' });
  const known = await post('/password-reset', { email });
  expect(unknown.status).toBe(200);
  expect(known.body).toEqual(unknown.body);
  const [mail] = (await smtp.waitFor(before + 1)).slice(before);
  expect(mail.to).toEqual([email]);
  const link = /https?:\/\/\S+\/password-reset\/pr_[A-Za-z0-9_-]+/.exec(mail.text)![0];
  const token = link.split('/password-reset/')[1];
  const page = await fetch(link);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('name="password"');
  const bad = await post('/password-reset/confirm', { token, password: 'short' });
  expect(bad.body.details.field).toBe('password');
  ok('resetPassword', { status: 200, body: (await post('/password-reset/confirm', { token, password: 'reset password 789' })).body } as any);
  expect((await session.get('/me')).status).toBe(401);
  const again = await post('/password-reset/confirm', { token, password: 'reset password 789' });
  expect(again.status).toBe(400);
  expect(again.body.code).toBe('reset_link_invalid');
  expect((await fetch(link)).status).toBe(404);
  await signIn(email, 'reset password 789');
  // The page works too.
  await post('/password-reset', { email });
  const [mail2] = (await smtp.waitFor(before + 2)).slice(before + 1);
  const link2 = /https?:\/\/\S+\/password-reset\/pr_[A-Za-z0-9_-]+/.exec(mail2.text)![0];
  const form = await fetch(link2, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `password=${encodeURIComponent(PASSWORD)}` });
  expect(form.status).toBe(200);
  expect(await form.text()).toContain('Your password is set');
  await signIn();
});

test('wrong passwords are limited per account and address: 429 with Retry-After there, even for the right password, and nowhere else', async () => {
  const o = await server.org({ name: 'Throttled' });
  const target = ok('getMe', await server.api(o.apiKey).get('/me')).user.email;
  await setPassword(server.db, target, 'throttled password 1');
  const from = (client: string) => ({ 'x-forwarded-for': client });
  for (let i = 0; i < 10; i++) expect((await post('/sessions', { email: target, password: `guess ${i} guess` }, from('203.0.113.20'))).status).toBe(401);
  const blocked = await post('/sessions', { email: target, password: 'throttled password 1' }, from('203.0.113.20'));
  expect(blocked.status).toBe(429);
  expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(blocked.body).toMatchObject({ code: 'rate_limited', vars: { bucket: 'signin' } });
  // The person, from another address, is not locked out; another account from the guessing address is unaffected.
  expect((await post('/sessions', { email: target, password: 'throttled password 1' }, from('198.51.100.20'))).status).toBe(201);
  expect((await post('/sessions', { email, password: PASSWORD }, from('203.0.113.20'))).status).toBe(201);
});

test('sign-up: a person, an organisation on the free plan, signed in; an address with an account is 409', async () => {
  const res = await post('/signup', { email: 'founder@example.test', password: 'founder password 1', name: 'Fran Founder', organizationName: 'Startup' });
  expect(res.status).toBe(201);
  expect(res.headers.get('set-cookie')).toMatch(/^vigil_session=vs_/);
  const me = ok('getMe', await new ApiClient(server.url, res.body.data.token).get('/me'));
  expect(me).toMatchObject({ user: { email: 'founder@example.test', name: 'Fran Founder' }, organization: { name: 'Startup', plan: 'free' }, membership: { role: 'owner' } });
  expect(await server.db.selectFrom('api_keys').select('id').where('organization_id', '=', res.body.data.organizationId).execute()).toEqual([]);
  const taken = await post('/signup', { email: 'FOUNDER@example.test', password: 'founder password 1', name: 'Again', organizationName: 'Again' });
  expect(taken.status).toBe(409);
  expect(taken.body.code).toBe('email_taken');
  const blank = await post('/signup', { email: 'x@example.test', password: 'founder password 1', name: ' ', organizationName: 'X' });
  expect(blank.body.details.field).toBe('name');

  const closed = await startTestServer();
  try {
    const r = await fetch(`${closed.url}/api/v1/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'a@example.test', password: 'a password 123', name: 'A', organizationName: 'A' }) });
    expect(r.status).toBe(403);
    expect((await r.json()).code).toBe('signup_closed');
  } finally {
    await closed.close();
  }
});

test('deleting my account: memberships, keys and personal channels go; an organisation I was alone in goes; sole owner is 409', async () => {
  const solo = await server.org({ name: 'Solo' });
  const soloEmail = ok('getMe', await server.api(solo.apiKey).get('/me')).user.email;
  await setPassword(server.db, soloEmail, 'solo password 123');
  const team = await server.org({ name: 'Team' });
  const joined = await addMember(server.db, { organizationId: team.organizationId, email: soloEmail, role: 'member' });
  const inTeam = server.api(joined.apiKey);
  const personal = ok('createChannel', await inTeam.post('/channels', { kind: 'email', name: 'Mine', target: 'solo@example.test', workspaceId: null }), 201);
  const shared = ok('createChannel', await inTeam.post('/channels', { kind: 'webhook', name: 'Team hook', target: 'https://hooks.example.test/t', workspaceId: null }), 201);
  ok('createMonitor', await server.api(solo.apiKey).post('/monitors', { name: 'solo site', kind: 'http', workspaceId: solo.workspaceId, config: JSON.stringify({ url: 'https://example.test' }) }), 201);
  const session = new ApiClient(server.url, (await signIn(soloEmail, 'solo password 123')).body.data.token);

  expect((await server.api(solo.apiKey).delete('/account')).body.code).toBe('session_required');
  // The only owner of an organisation with other members cannot leave it ownerless.
  await addMember(server.db, { organizationId: solo.organizationId, email: 'colleague@example.test', role: 'viewer' });
  const refused = await session.delete('/account');
  expect(refused.status).toBe(409);
  expect(refused.body).toMatchObject({ code: 'sole_owner', vars: { organizationId: solo.organizationId } });
  const colleague = ok('listMembers', await server.api(solo.apiKey).get('/members')).members.find((m: any) => m.email === 'colleague@example.test');
  ok('removeMember', await server.api(solo.apiKey).delete(`/members/${colleague.id}`));

  const userId = ok('getMe', await session.get('/me')).user.id;
  expect(ok('deleteAccount', await session.delete('/account'))).toEqual({ id: userId, deleted: true });
  expect((await session.get('/me')).status).toBe(401);
  expect((await server.api(solo.apiKey).get('/me')).status).toBe(401);
  expect((await inTeam.get('/me')).status).toBe(401);
  expect(await server.db.selectFrom('organizations').select('id').where('id', '=', solo.organizationId).execute()).toEqual([]);
  expect(await server.db.selectFrom('monitors').select('id').where('organization_id', '=', solo.organizationId).execute()).toEqual([]);
  expect(await server.db.selectFrom('users').select('id').where('id', '=', userId).execute()).toEqual([]);
  const channels = ok('listChannels', await server.api(team.apiKey).get('/channels'));
  expect(channels.find((c: any) => c.id === personal.id)).toBeUndefined();
  expect(channels.find((c: any) => c.id === shared.id)).toMatchObject({ owner: null });
  expect(JSON.stringify((await server.api(team.apiKey).get('/audit?limit=5')).body)).toContain('member.account_deleted');
  expect((await post('/sessions', { email: soloEmail, password: 'solo password 123' })).status).toBe(401);
});

test('behind a proxy (TRUST_PROXY), sign-in failures count per real client address, not per proxy', async () => {
  const proxied = await startTestServer({ TRUST_PROXY: 'loopback' });
  try {
    const attempt = (i: number, client: string) => fetch(`${proxied.url}/api/v1/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body: JSON.stringify({ email: `nobody${i}@example.test`, password: 'wrong password' }),
    }).then((r) => r.status);
    for (let i = 0; i < 30; i++) expect(await attempt(i, '203.0.113.5')).toBe(401);
    expect(await attempt(31, '203.0.113.5')).toBe(429);
    // Another client behind the same proxy is not held up.
    expect(await attempt(32, '203.0.113.6')).toBe(401);
  } finally {
    await proxied.close();
  }
}, 60_000);
