import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';

// Password attempts under concurrency and from many addresses (issue 24, item 7):
// points are spent before the password is hashed, so a burst never has more
// guesses hashed than the limit; a guesser holds up only their own address; a
// ceiling per account spaces attempts with a doubling delay instead of locking
// the person out; every refusal is the same 429 naming no account state.
// Client addresses are set with X-Forwarded-For (TRUST_PROXY=loopback).

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ TRUST_PROXY: 'loopback', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
});
afterAll(() => server.close());

type Answer = { status: number; retryAfter: string | null; body: any };

async function signIn(email: string, password: string, client: string): Promise<Answer> {
  const res = await fetch(`${server.url}/api/v1/sessions`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body: JSON.stringify({ email, password }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

/** A person with a password, signed in by nobody yet. */
async function person(password: string): Promise<string> {
  const o = await server.org();
  const email = ok('getMe', await server.api(o.apiKey).get('/me')).user.email as string;
  await setPassword(server.db, email, password);
  return email;
}

/** Every refusal is the same: 429 rate_limited, Retry-After in whole seconds, naming the `signin` limit and nothing about the account. */
function expectRefusal(a: Answer): void {
  expect(a.status).toBe(429);
  expect(a.retryAfter).toMatch(/^\d+$/);
  expect(a.body).toEqual({ error: `Rate limit exceeded; retry in ${a.retryAfter} seconds.`, code: 'rate_limited', vars: { bucket: 'signin', retryAfter: a.retryAfter }, details: null });
}

test('60 guesses at once from one address: at most 10 are evaluated, the right one among them or refused; the person signs in from elsewhere', async () => {
  const email = await person('the right password 1');
  const burst = Array.from({ length: 60 }, (_, i) => signIn(email, i === 45 ? 'the right password 1' : `wrong guess ${i}`, '203.0.113.1'));
  const answers = await Promise.all(burst);
  const evaluated = answers.filter((a) => a.status !== 429);
  expect(evaluated.length).toBeGreaterThan(0);
  expect(evaluated.length).toBeLessThanOrEqual(10);
  for (const a of evaluated) expect([401, 201]).toContain(a.status);
  answers.filter((a) => a.status === 429).forEach(expectRefusal);
  if (answers[45].status !== 201) {
    // The right password waits at this address, like any guess.
    expectRefusal(await signIn(email, 'the right password 1', '203.0.113.1'));
  }
  // Meanwhile the person, from an address that has not been guessing, signs in, and a typo of theirs is still told as such.
  expect((await signIn(email, 'a typo of mine', '198.51.100.1')).status).toBe(401);
  expect((await signIn(email, 'the right password 1', '198.51.100.1')).status).toBe(201);

  // An account that does not exist answers a burst the same way.
  const unknown = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn('nobody-here@example.test', `wrong guess ${i}`, '203.0.113.2')));
  expect(unknown.filter((a) => a.status !== 429).every((a) => a.status === 401)).toBe(true);
  expect(unknown.filter((a) => a.status !== 429).length).toBeLessThanOrEqual(10);
  unknown.filter((a) => a.status === 429).forEach(expectRefusal);
}, 300_000);

test('guessing spread over many addresses: past 100 failures an hour, attempts wait 1, 2, 4 … s (one at a time), and the right password still signs in', async () => {
  const email = await person('the right password 2');
  // 100 wrong passwords from 100 addresses: each is evaluated (401); the person is not locked out.
  for (let batch = 0; batch < 10; batch++) {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => signIn(email, 'wrong guess', `10.1.${batch}.${i + 1}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(401));
  }
  let fresh = 0;
  const anotherAddress = () => `10.2.0.${++fresh}`;
  for (const delay of [1, 2, 4]) {
    // One attempt is evaluated; it fails, and the account waits `delay` s before the next, from any address.
    expect((await signIn(email, 'wrong guess', anotherAddress())).status).toBe(401);
    const waiting = await Promise.all([signIn(email, 'wrong guess', anotherAddress()), signIn(email, 'the right password 2', anotherAddress())]);
    waiting.forEach(expectRefusal);
    expect(waiting.map((a) => a.retryAfter)).toEqual([String(delay), String(delay)]);
    await new Promise((r) => setTimeout(r, delay * 1000 + 100));
  }
  // Past the ceiling a burst from many addresses still has one attempt evaluated at most.
  const burst = await Promise.all(Array.from({ length: 12 }, () => signIn(email, 'wrong guess', anotherAddress())));
  expect(burst.filter((a) => a.status === 401)).toHaveLength(1);
  burst.filter((a) => a.status === 429).forEach(expectRefusal);
  // The fourth failure past the ceiling: 8 s (the delay counts failures, not the attempts refused meanwhile).
  const after = await signIn(email, 'the right password 2', anotherAddress());
  expectRefusal(after);
  expect(after.retryAfter).toBe('8');
  await new Promise((r) => setTimeout(r, 8100));
  expect((await signIn(email, 'the right password 2', anotherAddress())).status).toBe(201);
}, 300_000);

test('a wrong current password is a guess too: a burst of them has at most 10 evaluated; the right one works from another address', async () => {
  const email = await person('the right password 3');
  const token = (await signIn(email, 'the right password 3', '198.51.100.3')).body.data.token as string;
  const change = (currentPassword: string, client: string) => fetch(`${server.url}/api/v1/me/password`, {
    method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-forwarded-for': client },
    body: JSON.stringify({ currentPassword, newPassword: 'the new password 3' }),
  }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() }));
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => change(`wrong guess ${i}`, '203.0.113.3')));
  const evaluated = answers.filter((a) => a.status !== 429);
  expect(evaluated.length).toBeGreaterThan(0);
  expect(evaluated.length).toBeLessThanOrEqual(10);
  for (const a of evaluated) expect(a.body.code).toBe('password_incorrect');
  answers.filter((a) => a.status === 429).forEach(expectRefusal);
  expect((await change('the right password 3', '198.51.100.3')).status).toBe(200);
}, 60_000);

const redisUrl = process.env.TEST_REDIS_URL;
describe.each([['postgres', {}], ...(redisUrl ? [['redis', { REDIS_URL: redisUrl }]] as const : [])] as [string, Record<string, string>][])('on the %s store', (store, env) => {
  let shared: TestServer;
  beforeAll(async () => {
    shared = await startTestServer({ RATE_LIMIT_STORE: store, TRUST_PROXY: 'loopback', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', ...env });
  });
  afterAll(() => shared.close());

  test('a burst from one address has at most 10 guesses evaluated; the person signs in from another address', async () => {
    const o = await shared.org();
    const email = ok('getMe', await shared.api(o.apiKey).get('/me')).user.email as string;
    await setPassword(shared.db, email, 'the right password 4');
    const attempt = (password: string, client: string) => fetch(`${shared.url}/api/v1/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body: JSON.stringify({ email, password }),
    }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.json() }));
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => attempt(`wrong guess ${i}`, '203.0.113.40')));
    const evaluated = answers.filter((a) => a.status !== 429);
    expect(evaluated.length).toBeGreaterThan(0);
    expect(evaluated.length).toBeLessThanOrEqual(10);
    answers.filter((a) => a.status === 429).forEach(expectRefusal);
    expect((await attempt('the right password 4', '198.51.100.40')).status).toBe(201);
  }, 300_000);
});
