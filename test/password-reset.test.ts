import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { setPassword } from '../src/domain/organizations';
import { ok, until } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';

// Password reset (issue 24, item 8): the request is answered in the same
// (short) time whether or not the address is known, because the mail goes
// through the job queue and the handler does the same work for any address;
// a retried job sends the link it already made, never a second one. The
// one-time link pages are limited per client address.

/** An SMTP server that takes `delayMs` to accept each message, and can take one yet answer 451 (a lost reply). */
async function slowSmtp(delayMs: number) {
  const recipients: string[] = [];
  const messages: { to: string[]; raw: string }[] = [];
  let loseNextReply = false;
  const server = new SMTPServer({
    secure: false, disabledCommands: ['STARTTLS', 'AUTH'], authOptional: true, logger: false, closeTimeout: 1000,
    onRcptTo(address, _session, callback) { recipients.push(address.address); callback(); },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => setTimeout(() => {
        messages.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        if (!loseNextReply) return callback();
        loseNextReply = false;
        callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
      }, delayMs));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = (server as unknown as { server: { address(): AddressInfo } }).server.address();
  return {
    url: `smtp://127.0.0.1:${port}`, recipients, messages,
    loseNextReply() { loseNextReply = true; },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The reset link in a raw message (quoted-printable soft breaks joined). */
const linkIn = (raw: string) => /https?:\/\/\S+\/password-reset\/pr_[A-Za-z0-9_-]{43}/.exec(raw.replace(/=\r?\n/g, ''))?.[0] ?? null;

let server: TestServer;
let smtp: Awaited<ReturnType<typeof slowSmtp>>;

beforeAll(async () => {
  smtp = await slowSmtp(1000);
  server = await startTestServer({ SMTP_URL: smtp.url, WORKER: 'true', TRUST_PROXY: 'loopback', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
});
afterAll(async () => {
  await server.close();
  await smtp.close();
});

async function requestReset(email: string, client: string) {
  const started = performance.now();
  const res = await fetch(`${server.url}/api/v1/password-reset`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body: JSON.stringify({ email }),
  });
  return { status: res.status, body: await res.json(), ms: performance.now() - started };
}

async function person(): Promise<string> {
  const o = await server.org();
  const email = ok('getMe', await server.api(o.apiKey).get('/me')).user.email as string;
  await setPassword(server.db, email, 'the old password');
  return email;
}

test('a known and an unknown address are answered alike and at once, though the mail server takes a second; only the known one gets mail', async () => {
  const email = await person();
  const unknown = await requestReset('nobody-at-all@example.test', '203.0.113.10');
  const known = await requestReset(email, '203.0.113.11');
  expect(known.status).toBe(200);
  expect(known.body).toEqual(unknown.body);
  // Neither waits for the mail server (1 s a message): the answer comes before any mail is sent.
  expect(unknown.ms).toBeLessThan(700);
  expect(known.ms).toBeLessThan(700);
  const mail = await until('the reset mail', async () => smtp.messages.find((m) => m.to.includes(email)));
  expect(linkIn(mail.raw)).toBeTruthy();
  await new Promise((r) => setTimeout(r, 1500));
  expect(smtp.recipients).not.toContain('nobody-at-all@example.test');
});

test('a retry after the mail server took the message but lost its reply sends the same link, which works once', async () => {
  const email = await person();
  smtp.loseNextReply();
  expect((await requestReset(email, '203.0.113.12')).status).toBe(200);
  // The first attempt is answered 451 (retried after about 3 s); the second is taken.
  const mails = await until('two deliveries', async () => {
    const mine = smtp.messages.filter((m) => m.to.includes(email));
    return mine.length >= 2 ? mine : null;
  }, 30_000);
  const links = mails.map((m) => linkIn(m.raw));
  expect(links[0]).toBeTruthy();
  expect(links[1]).toBe(links[0]);
  const token = links[0]!.split('/password-reset/')[1];
  const confirm = (password: string) => fetch(`${server.url}/api/v1/password-reset/confirm`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, password }),
  });
  expect((await confirm('the new password 1')).status).toBe(200);
  expect((await confirm('the new password 2')).status).toBe(400);
  // No third mail comes later.
  await new Promise((r) => setTimeout(r, 4000));
  expect(smtp.messages.filter((m) => m.to.includes(email))).toHaveLength(2);
}, 60_000);

test('requests at once are limited atomically, alike for known and unknown addresses: 3 per e-mail address an hour', async () => {
  const email = await person();
  const known = await Promise.all(Array.from({ length: 6 }, () => requestReset(email, '203.0.113.13')));
  const unknown = await Promise.all(Array.from({ length: 6 }, () => requestReset('nobody-either@example.test', '203.0.113.14')));
  expect(known.map((a) => a.status).sort()).toEqual([200, 200, 200, 429, 429, 429]);
  expect(unknown.map((a) => a.status).sort()).toEqual([200, 200, 200, 429, 429, 429]);
  expect(known.find((a) => a.status === 429)!.body).toMatchObject({ code: 'rate_limited', vars: { bucket: 'reset_account' } });
});

test('link pages (invitations, password reset) are limited per client address: 60 requests in 15 minutes, then 429 with Retry-After', async () => {
  const hit = (path: string, client: string, method = 'GET') => fetch(`${server.url}${path}`, {
    method, headers: { 'x-forwarded-for': client, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    body: method === 'POST' ? 'password=a+long+enough+password' : undefined,
  });
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) statuses.push((await hit(`/invitations/inv_guess${i}`, '203.0.113.15')).status);
  for (let i = 0; i < 30; i++) statuses.push((await hit(`/password-reset/pr_guess${i}`, '203.0.113.15', i % 2 ? 'POST' : 'GET')).status);
  expect(statuses).toEqual(Array(60).fill(404));
  for (const [path, method] of [['/invitations/inv_x', 'GET'], ['/invitations/inv_x', 'POST'], ['/password-reset/pr_x', 'GET'], ['/password-reset/pr_x', 'POST']]) {
    const refused = await hit(path, '203.0.113.15', method);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.text()).toContain('Too many requests');
  }
  const json = await fetch(`${server.url}/invitations/inv_x`, { method: 'POST', headers: { 'x-forwarded-for': '203.0.113.15', 'content-type': 'application/json' }, body: '{}' });
  expect(json.status).toBe(429);
  expect((await json.json()).code).toBe('rate_limited');
  // Another address is not held up.
  expect((await hit('/invitations/inv_x', '203.0.113.16')).status).toBe(404);
});
