import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { ApiClient, startTestServer, type TestServer } from './support/harness';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';

// Six-digit SMS codes sent at once: no more than five are ever compared per
// enrolment (the enrolment's row lock counts them one after another), after
// which the code is void, the right one included.

let server: TestServer;
let provider: HttpReceiver;

beforeAll(async () => {
  provider = await startHttpReceiver();
  provider.respondWith(201, { sid: 'SM1', status: 'queued' });
  server = await startTestServer({
    SMS_PROVIDER_URL: `${provider.url}/2010-04-01`, SMS_ACCOUNT_SID: 'AC1', SMS_AUTH_TOKEN: 'sms-token', SMS_FROM: '+15005550006',
    RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
  });
});
afterAll(async () => {
  await server.close();
  await provider.close();
});

test('40 codes at once: five are compared (400 verification_code_incorrect), the rest find no enrolment; the right code no longer works', async () => {
  const org = await server.org({ plan: 'business' });
  const email = ok('getMe', await server.api(org.apiKey).get('/me')).user.email;
  await setPassword(server.db, email, 'sms limit password');
  const signedIn = await fetch(`${server.url}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'sms limit password' }) });
  const session = new ApiClient(server.url, (await signedIn.json()).data.token);
  ok('createSmsEnrolment', await session.post('/sms/enrolment', { phone: '+4915123456789' }), 201);
  const [sent] = await provider.waitFor(1);
  const code = /\b(\d{6})\b/.exec(new URLSearchParams(sent.body).get('Body') ?? '')![1];
  const guesses = Array.from({ length: 40 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
  const answers = await Promise.all(guesses.map((g) => session.post('/sms/enrolment/confirm', { code: g })));
  const compared = answers.filter((a) => a.status === 400);
  expect(compared).toHaveLength(5);
  expect(compared.every((a) => a.body.code === 'verification_code_incorrect')).toBe(true);
  expect(compared.map((a) => a.body.vars.triesLeft).sort()).toEqual(['0', '1', '2', '3', '4']);
  expect(answers.filter((a) => a.status === 404)).toHaveLength(35);
  expect((await session.post('/sms/enrolment/confirm', { code })).status).toBe(404);
  expect(ok('listChannels', await session.get('/channels')).find((c: any) => c.kind === 'sms')).toMatchObject({ confirmed: false });
});
