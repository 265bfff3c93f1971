/**
 * Landing signed in from a one-time link: the first owner's link printed on
 * the first start of an empty database (a password-reset token for the owner,
 * 24 h, once, stored hashed), POST /password-reset/confirm and POST
 * /invitations/accept with `signIn`, and the server's own link pages.
 */
import { sql } from 'kysely';
import { hashToken } from '../src/crypto/tokens';
import { connectDb } from '../src/db/connect';
import { ownerSetupToken } from '../src/people/sessions';
import { freshDatabase, startTestServer, type TestServer } from './support/harness';
import { ok, until } from './support/expect';
import { startChild, tempDir } from './support/child';
import { startSmtpServer, type SmtpReceiver } from './support/receivers';

let server: TestServer;
let smtp: SmtpReceiver;

beforeAll(async () => {
  smtp = await startSmtpServer();
  server = await startTestServer({ SMTP_URL: smtp.url, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const cookieOf = (res: Response) => /vigil_session=(vs_[A-Za-z0-9_-]+);/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? null;
const meWith = (base: string, token: string) => fetch(`${base}/api/v1/me`, { headers: { cookie: `vigil_session=${token}` } });

test('the first start prints a one-time link; the owner sets a password through it and lands signed in; once only; a later start prints none', async () => {
  const db = await freshDatabase();
  const dir = tempDir('vigil-first-owner-');
  const env = { DATABASE_URL: db.url, DATA_DIR: dir, WORKER: 'false', LOG_LEVEL: 'warn' };
  const first = await startChild(env);
  try {
    const line = /Set the owner's password and sign in \(owner@localhost; one-time link, valid 24 hours\):\n {2}(\S+)/.exec(first.output());
    expect(line).not.toBeNull();
    const link = line![1];
    expect(link).toMatch(new RegExp(`^${first.url}/password-reset/pr_[A-Za-z0-9_-]{43}$`));
    const token = link.split('/password-reset/')[1];
    // Stored as its hash only, for 24 hours.
    const { db: peek } = connectDb(db.url, 1);
    try {
      const rows = await peek.selectFrom('password_resets').select(['token_hash', 'expires_at']).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash.equals(hashToken(token))).toBe(true);
      expect(Math.abs(rows[0].expires_at.getTime() - Date.now() - 24 * 3600_000)).toBeLessThan(5 * 60_000);
      const text = JSON.stringify(await sql`select * from password_resets`.execute(peek));
      expect(text).not.toContain(token);
    } finally {
      await peek.destroy();
    }
    // The page the link opens is the server's own reset form.
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="password"');
    // A client (the web app) posts the token with signIn: the password is set and the answer signs the owner in.
    const res = await post(first.url, '/password-reset/confirm', { token, password: 'the owner password', signIn: true });
    const body = await res.json() as any;
    expect(res.status).toBe(200);
    expect(body.data).toEqual({ ok: true, signedIn: { token: expect.stringMatching(/^vs_/), session: expect.objectContaining({ current: true }), organizationId: expect.any(String), membershipId: expect.any(String) } });
    const cookie = cookieOf(res);
    expect(cookie).toBe(body.data.signedIn.token);
    expect(res.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Lax/);
    const me = await meWith(first.url, cookie!);
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).data.membership.role).toBe('owner');
    // And signs in with the password from now on.
    expect((await post(first.url, '/sessions', { email: 'owner@localhost', password: 'the owner password' })).status).toBe(201);
    // Once: the link and the operation refuse it now.
    expect((await fetch(link)).status).toBe(404);
    const again = await post(first.url, '/password-reset/confirm', { token, password: 'another password', signIn: true });
    expect([again.status, ((await again.json()) as any).code]).toEqual([400, 'reset_link_invalid']);
  } finally {
    expect(await first.stop()).toBe(0);
  }
  const second = await startChild(env);
  try {
    expect(second.output()).not.toContain('password-reset/');
    expect(second.bootstrapKey).toBeNull();
  } finally {
    await second.stop();
    await db.drop();
  }
}, 120_000);

test('the link page itself signs the person in (the session cookie) when the password is set', async () => {
  const org = await server.org();
  const token = await ownerSetupToken(server.db, org.userId);
  const form = await fetch(`${server.url}/password-reset/${token}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=page%20password%201' });
  expect(form.status).toBe(200);
  expect(await form.text()).toContain('You are signed in');
  const cookie = cookieOf(form);
  expect(cookie).toMatch(/^vs_/);
  expect((await meWith(server.url, cookie!)).status).toBe(200);
});

test('an expired link does not work, and without signIn the reset answers no session', async () => {
  const org = await server.org();
  const token = await ownerSetupToken(server.db, org.userId);
  const plain = await post(server.url, '/password-reset/confirm', { token, password: 'plain reset password' });
  expect(plain.status).toBe(200);
  expect(((await plain.json()) as any).data).toEqual({ ok: true, signedIn: null });
  expect(cookieOf(plain)).toBeNull();
  const old = await ownerSetupToken(server.db, org.userId);
  await server.db.updateTable('password_resets').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', org.userId).execute();
  const late = await post(server.url, '/password-reset/confirm', { token: old, password: 'too late password', signIn: true });
  expect([late.status, ((await late.json()) as any).code]).toEqual([400, 'reset_link_invalid']);
});

test('an accepted invitation lands signed in: a newcomer with signIn gets a session in the organisation joined; an existing account does not', async () => {
  const org = await server.org();
  const owner = server.api(org.apiKey);
  const invite = async (email: string) => {
    ok('inviteMember', await owner.post('/members', { email, role: 'member' }), 201);
    const mail = await until('the mail', async () => smtp.messages.find((m) => m.to.includes(email)));
    return /\/invitations\/(inv_[A-Za-z0-9_-]+)/.exec(mail!.text)![1];
  };
  const token = await invite('newcomer@example.test');
  const res = await post(server.url, '/invitations/accept', { token, name: 'New Comer', password: 'newcomer password', signIn: true });
  expect(res.status).toBe(201);
  const data = ((await res.json()) as any).data;
  expect(data).toEqual({
    organizationId: org.organizationId, membershipId: expect.stringMatching(/^mem_/), userId: expect.stringMatching(/^usr_/), role: 'member',
    signedIn: { token: expect.stringMatching(/^vs_/), session: expect.objectContaining({ current: true }), organizationId: org.organizationId, membershipId: data.membershipId },
  });
  expect(cookieOf(res)).toBe(data.signedIn.token);
  const me = (await (await meWith(server.url, data.signedIn.token)).json()) as any;
  expect([me.data.organization.id, me.data.membership.role]).toEqual([org.organizationId, 'member']);

  // Someone who already has an account (the newcomer, invited elsewhere) proves no password here: no session.
  const other = await server.org();
  ok('inviteMember', await server.api(other.apiKey).post('/members', { email: 'newcomer@example.test', role: 'viewer' }), 201);
  const mail = await until('the second mail', async () => smtp.messages.filter((m) => m.to.includes('newcomer@example.test')).at(1));
  const second = /\/invitations\/(inv_[A-Za-z0-9_-]+)/.exec(mail!.text)![1];
  const existing = await post(server.url, '/invitations/accept', { token: second, signIn: true });
  expect(existing.status).toBe(201);
  expect(((await existing.json()) as any).data.signedIn).toBeNull();
  expect(cookieOf(existing)).toBeNull();

  // The invitation page's form signs a newcomer in too.
  const third = await invite('formcomer@example.test');
  const form = await fetch(`${server.url}/invitations/${third}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Form%20Comer&password=form%20password%201' });
  expect(form.status).toBe(201);
  expect(await form.text()).toContain('signed in as formcomer@example.test');
  expect((await meWith(server.url, cookieOf(form)!)).status).toBe(200);
}, 60_000);
