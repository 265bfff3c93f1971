import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { ApiClient, startTestServer, type TestServer } from './support/harness';

// A server without an SMS provider (SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_FROM
// unset, as a fresh `npm start`): enrolling a phone is 503 `sms_unavailable`
// on every transport (REST, and Connect `unavailable`, whose
// own status is 503 too), documented in the contract; nothing is stored. Not
// the 502 of a provider that refused: no provider was asked.

let server: TestServer;

beforeAll(async () => { server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' }); });
afterAll(async () => { await server.close(); });

test('enrolling without an SMS provider is 503 sms_unavailable on REST and Connect, as the contract says, and keeps nothing', async () => {
  const org = await server.org({ plan: 'business' });
  const email = ok('getMe', await server.api(org.apiKey).get('/me')).user.email;
  await setPassword(server.db, email, 'sms test password');
  const token = (await server.api(null).post('/sessions', { email, password: 'sms test password' })).body.data.token as string;
  const session = new ApiClient(server.url, token);

  const rest = await session.post('/sms/enrolment', { phone: '+4915123456789' });
  expect(rest.status).toBe(503);
  expect(rest.body).toMatchObject({ code: 'sms_unavailable', error: expect.stringContaining('SMS provider') });

  const connect = await fetch(`${server.url}/rpc/vigil.v1.SmsService/CreateSmsEnrolment`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ phone: '+4915123456789' }),
  });
  expect(connect.status).toBe(503);
  expect((await connect.json()).code).toBe('unavailable');
  expect(JSON.parse(connect.headers.get('vigil-error') ?? '{}').code).toBe('sms_unavailable');

  // The contract documents the status for the operation.
  const spec = await (await fetch(`${server.url}/openapi.json`)).json();
  expect(Object.keys(spec.paths['/sms/enrolment'].post.responses)).toEqual(expect.arrayContaining(['502', '503']));
  expect(spec.paths['/sms/enrolment'].post.description).toContain('sms_unavailable');

  // Nothing was stored: no channel, no pending code.
  expect(await server.db.selectFrom('notification_channels').select('id').where('organization_id', '=', org.organizationId).where('kind', '=', 'sms').execute()).toEqual([]);
  expect(await server.db.selectFrom('sms_enrolments').select('membership_id').execute()).toEqual([]);
});
