import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setPassword } from '../src/domain/organizations';
import { ok, until } from './support/expect';
import { ApiClient, startTestServer, type TestServer } from './support/harness';
import { checkNow } from './support/monitors';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';

// SMS enrolment (session only) against a local fake of a Twilio-compatible
// provider: the code goes out, confirming turns the number into the person's
// SMS channel, which is then paged; refusals by plan, number and country;
// wrong codes (five, then void); enrolling again replaces the number.

const SID = 'AC0123456789';
const TOKEN = 'sms-auth-token-9f8e';
let server: TestServer;
let provider: HttpReceiver;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let session: ApiClient;
let target: http.Server;
let targetUrl: string;
let failing = false;

const texts = (to: string) => provider.requests.filter((r) => new URLSearchParams(r.body).get('To') === to).map((r) => new URLSearchParams(r.body).get('Body') ?? '');
const codeIn = (text: string) => /\b(\d{6})\b/.exec(text)?.[1] ?? '';

async function sessionFor(apiKey: string) {
  const email = ok('getMe', await server.api(apiKey).get('/me')).user.email;
  await setPassword(server.db, email, 'sms test password');
  const res = await fetch(`${server.url}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'sms test password' }) });
  return new ApiClient(server.url, (await res.json()).data.token);
}

beforeAll(async () => {
  provider = await startHttpReceiver();
  target = http.createServer((_req, res) => { res.statusCode = failing ? 503 : 200; res.end('x'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({
    WORKER: 'true', SMS_PROVIDER_URL: `${provider.url}/2010-04-01`, SMS_ACCOUNT_SID: SID, SMS_AUTH_TOKEN: TOKEN, SMS_FROM: '+15005550006',
    RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
  });
  org = await server.org({ plan: 'business' });
  session = await sessionFor(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await provider.close();
  await new Promise((r) => target.close(r));
});
beforeEach(() => provider.respondWith(201, { sid: 'SM123', status: 'queued' }));

test('keys are refused; bad numbers, unsupported countries and closed routes are 400 with stable codes', async () => {
  const byKey = await server.api(org.apiKey).post('/sms/enrolment', { phone: '+4915123456789' });
  expect(byKey.status).toBe(403);
  expect(byKey.body.code).toBe('session_required');
  for (const [phone, code] of [['12345', 'not_a_phone_number'], ['+447700900123', 'not_a_phone_number'], ['+6797012345', 'sms_country_unsupported'], ['+8613800138000', 'sms_route_not_open']]) {
    const res = await session.post('/sms/enrolment', { phone });
    expect({ phone, status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ phone, status: 400, code, field: 'phone' });
  }
  expect(provider.requests).toEqual([]);
  const free = await server.org({ plan: 'free' });
  const freeSession = await sessionFor(free.apiKey);
  const refused = await freeSession.post('/sms/enrolment', { phone: '+4915123456789' });
  expect(refused.status).toBe(402);
  expect(refused.body.code).toBe('sms_not_included');
});

test('enrol, confirm with the code, and the number is paged; an unconfirmed number receives nothing', async () => {
  const enrolled = ok('createSmsEnrolment', await session.post('/sms/enrolment', { phone: '+49 151 2345 6789', name: 'My phone' }), 201);
  expect(enrolled).toEqual({ country: 'DE', caveat: null });
  const [req] = await provider.waitFor(1);
  expect(req.path).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`);
  expect(req.headers.authorization).toBe(`Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
  const form = new URLSearchParams(req.body);
  expect(form.get('To')).toBe('+4915123456789');
  expect(form.get('From')).toBe('+15005550006');
  const code = codeIn(form.get('Body')!);
  expect(code).toMatch(/^\d{6}$/);

  const channel = ok('listChannels', await session.get('/channels')).find((c: any) => c.kind === 'sms');
  expect(channel).toMatchObject({ name: 'My phone', confirmed: false, target: expect.stringMatching(/^\+49•+6789$/) });
  expect(JSON.stringify(ok('listChannels', await session.get('/channels')))).not.toContain('15123456789');

  // A monitor paging this channel: while unconfirmed, nothing is sent.
  const mon = ok('createMonitor', await session.post('/monitors', { name: 'api', kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: `${targetUrl}/api`, timeoutSeconds: 5 }) }), 201).id;
  ok('setMonitorChannels', await session.put(`/monitors/${mon}/channels`, { channelIds: [channel.id] }));
  failing = true;
  expect((await checkNow(server, session, mon)).openIncidentId).toBeTruthy();
  await new Promise((r) => setTimeout(r, 1500));
  expect(texts('+4915123456789')).toHaveLength(1); // the code only
  failing = false;
  await checkNow(server, session, mon);

  const malformed = await session.post('/sms/enrolment/confirm', { code: '12a456' });
  expect(malformed.body.code).toBe('verification_code_malformed');
  const wrong = await session.post('/sms/enrolment/confirm', { code: code === '000000' ? '111111' : '000000' });
  expect(wrong.status).toBe(400);
  expect(wrong.body).toMatchObject({ code: 'verification_code_incorrect', details: { field: 'code' } });
  ok('confirmSmsEnrolment', await session.post('/sms/enrolment/confirm', { code }));
  expect(ok('listChannels', await session.get('/channels')).find((c: any) => c.id === channel.id).confirmed).toBe(true);
  expect((await session.post('/sms/enrolment/confirm', { code })).status).toBe(404);

  failing = true;
  await checkNow(server, session, mon);
  await until('the SMS page', async () => texts('+4915123456789').some((t) => t.startsWith('Vigil: ')));
  expect(texts('+4915123456789').find((t) => t.startsWith('Vigil: '))).toMatch(/api/);
  failing = false;
  await checkNow(server, session, mon);
});

test('five wrong codes void the enrolment; a provider refusal is 502 and keeps the earlier number', async () => {
  const other = await server.org({ plan: 'pro' });
  const s = await sessionFor(other.apiKey);
  ok('createSmsEnrolment', await s.post('/sms/enrolment', { phone: '+14155552671' }), 201);
  const code = codeIn(texts('+14155552671').at(-1)!);
  const wrongCode = code === '999999' ? '888888' : '999999';
  for (let i = 0; i < 4; i++) expect((await s.post('/sms/enrolment/confirm', { code: wrongCode })).body.code).toBe('verification_code_incorrect');
  const fifth = await s.post('/sms/enrolment/confirm', { code: wrongCode });
  expect(fifth.body.message ?? fifth.body.error).toMatch(/void/);
  expect((await s.post('/sms/enrolment/confirm', { code })).status).toBe(404);

  // Enrol and confirm, then a refused re-enrolment changes nothing.
  const res = ok('createSmsEnrolment', await s.post('/sms/enrolment', { phone: '+14155552671' }), 201);
  expect(res).toEqual({ country: 'US', caveat: 'registration-pending' });
  ok('confirmSmsEnrolment', await s.post('/sms/enrolment/confirm', { code: codeIn(texts('+14155552671').at(-1)!) }));
  provider.respondWith(400, { code: 21211, message: "The 'To' number is not a valid phone number." });
  const refused = await s.post('/sms/enrolment', { phone: '+4915123456789' });
  expect(refused.status).toBe(502);
  expect(refused.body.code).toBe('verification_code_not_sent');
  expect(JSON.stringify(refused.body)).not.toContain(TOKEN);
  const sms = ok('listChannels', await s.get('/channels')).filter((c: any) => c.kind === 'sms');
  expect(sms).toEqual([expect.objectContaining({ confirmed: true, target: expect.stringMatching(/2671$/) })]);

  // Enrolling a new number replaces the old one, which receives nothing more.
  provider.respondWith(201, { sid: 'SM2' });
  ok('createSmsEnrolment', await s.post('/sms/enrolment', { phone: '+4915123456789' }), 201);
  const after = ok('listChannels', await s.get('/channels')).filter((c: any) => c.kind === 'sms');
  expect(after).toEqual([expect.objectContaining({ confirmed: false, target: expect.stringMatching(/6789$/) })]);
  const audit = JSON.stringify((await s.get('/audit?limit=20')).body);
  expect(audit).not.toContain('4155552671');
  expect(audit).not.toContain(code);
});
