import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createSecretBox } from '../src/crypto/secrets';
import { hashToken } from '../src/crypto/tokens';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { checkNow } from './support/monitors';
import { stubLookup, type LookupStub } from './support/lookup-stub';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';

// Subscriber webhooks are named by anonymous visitors, so they obey the strict
// outbound policy whatever CHECKS_ALLOW_PRIVATE says (this server runs with it
// true, as a self-hosted one does by default): no loopback, private, link-local,
// CGNAT, multicast, unspecified or metadata address, literal or resolved, at
// subscription and again at every delivery (DNS rebinding). Subscribing never
// connects to the URL. Every connection this file makes is to loopback.
//
// Names under example.test get their addresses from a dns.lookup stub
// (support/lookup-stub.ts says why). 203.0.113.0/24 (TEST-NET-3, never
// routed) plays a public address and is never connected to: every name mapped
// to it is remapped to loopback before any delivery, or only ever subscribed.

const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');
let lookup: LookupStub;

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let hooks: HttpReceiver;
let hookPort: number;
let target: http.Server;
let targetUrl: string;
let failing = false;
let visitor = 0;

beforeAll(async () => {
  lookup = stubLookup('.example.test');
  hooks = await startHttpReceiver();
  hookPort = Number(new URL(hooks.url).port);
  target = http.createServer((_req, res) => { res.statusCode = failing ? 503 : 200; res.end('x'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({
    WORKER: 'true', MASTER_KEY, CHECKS_ALLOW_PRIVATE: 'true', TRUST_PROXY: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
  });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await hooks.close();
  await new Promise((r) => target.close(r));
  lookup.restore();
});

async function subscribedPage(name: string) {
  const monitorId = ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 5 }),
  }), 201).id as string;
  await checkNow(server, api, monitorId);
  const p = ok('createStatusPage', await api.post('/status-pages', { name, workspaceId: org.workspaceId }), 201);
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { subscribersEnabled: true }));
  ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId }), 201);
  return { id: p.id as string, slug: p.slug as string, monitorId };
}

/** Subscribes as a visitor of an address of its own (so the per-address limit of 10 an hour never interferes). */
async function subscribe(slug: string, webhook: string) {
  const res = await fetch(`${server.url}/status/${slug}/subscribe`, {
    method: 'POST', body: JSON.stringify({ webhook }),
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-forwarded-for': `198.51.100.${++visitor % 250}` },
  });
  return { status: res.status, body: await res.json() as any };
}

async function subscribers(pageId: string) {
  return ok('listStatusPageSubscribers', await api.get(`/status-pages/${pageId}/subscribers`)) as { id: string; target: string }[];
}

test('a webhook at a non-public address is refused at subscription (400 webhook_not_public on `webhook`), even with CHECKS_ALLOW_PRIVATE=true, and nothing is contacted', async () => {
  const p = await subscribedPage('strict');
  lookup.zone.set('inside.example.test', ['10.1.2.3']);
  lookup.zone.set('mixed.example.test', ['203.0.113.10', '127.0.0.1']);
  lookup.zone.set('mapped.example.test', ['::ffff:127.0.0.1']);
  lookup.zone.set('meta.example.test', ['169.254.169.254']);
  const refused = [
    `${hooks.url}/hook`, `http://localhost:${hookPort}/hook`, `http://[::1]:${hookPort}/hook`, `http://[::ffff:127.0.0.1]:${hookPort}/hook`,
    `http://2130706433:${hookPort}/hook`, `http://0x7f.1:${hookPort}/hook`, 'http://0.0.0.0/hook', 'http://[::]/hook',
    'http://10.0.0.1/hook', 'http://172.16.5.4/hook', 'http://192.168.1.1/hook', 'http://100.64.0.1/hook', 'http://224.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/latest/meta-data/', 'http://[fe80::1]/hook', 'http://[::ffff:a9fe:a9fe]/x',
    'http://[::127.0.0.1]/hook', 'http://[64:ff9b::a00:1]/hook',
    'https://inside.example.test/hook', `http://mixed.example.test:${hookPort}/hook`, `http://mapped.example.test:${hookPort}/hook`,
    'http://meta.example.test/latest/meta-data/', 'https://nowhere.example.test/hook',
  ];
  for (const webhook of refused) {
    const res = await subscribe(p.slug, webhook);
    expect({ webhook, status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ webhook, status: 400, code: 'webhook_not_public', field: 'webhook' });
    // One answer for every refusal, naming no address a name resolved to: subscribing tells nothing of the server's network.
    expect(res.body.error).not.toMatch(/10\.1\.2\.3|127\.0\.0\.1|169\.254|::ffff/);
  }
  expect(lookup.asked).toEqual(expect.arrayContaining(['inside.example.test', 'mixed.example.test', 'mapped.example.test', 'meta.example.test', 'nowhere.example.test']));

  // The form of the URL: http(s) only, no credentials in it, a sane length.
  for (const webhook of ['ftp://203.0.113.10/x', 'file:///etc/passwd', 'https://user:pw@203.0.113.10/x', 'https://user@203.0.113.10/x', `https://203.0.113.10/${'a'.repeat(2100)}`]) {
    const res = await subscribe(p.slug, webhook);
    expect({ webhook: webhook.slice(0, 60), status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ webhook: webhook.slice(0, 60), status: 400, code: 'invalid_field', field: 'webhook' });
  }

  expect(await subscribers(p.id)).toEqual([]);
  expect(hooks.requests).toEqual([]); // never connected to, not even the loopback receiver
});

test('a public address is accepted without being contacted', async () => {
  const p = await subscribedPage('public');
  lookup.zone.set('hooks.example.test', ['203.0.113.20']);
  expect((await subscribe(p.slug, 'https://hooks.example.test/news?token=abc')).status).toBe(201);
  expect((await subscribe(p.slug, 'https://203.0.113.21/news')).status).toBe(201);
  expect((await subscribers(p.id)).map((s) => s.target).sort()).toEqual(['203.0.113.21', 'hooks.example.test']);
  // Never delivered to: remove them before anything could be news.
  for (const s of await subscribers(p.id)) ok('removeStatusPageSubscriber', await api.delete(`/status-pages/${p.id}/subscribers?subscriber=${s.id}`));
});

test('delivery looks the name up again and refuses a name that now resolves to loopback (DNS rebinding); the receiver gets nothing', async () => {
  const p = await subscribedPage('rebind');
  lookup.zone.set('rebind.example.test', ['203.0.113.30']);
  expect((await subscribe(p.slug, `http://rebind.example.test:${hookPort}/rebound`)).status).toBe(201);
  // Between subscription and delivery the name moves to the loopback receiver.
  lookup.zone.set('rebind.example.test', ['127.0.0.1']);
  const before = lookup.asked.filter((n) => n === 'rebind.example.test').length;

  failing = true;
  const down = await checkNow(server, api, p.monitorId);
  failing = false;
  expect(down.openIncidentId).toBeTruthy();
  // The delivery ran (it asked for the name again) and was refused.
  await until('the delivery looking the name up', async () => lookup.asked.filter((n) => n === 'rebind.example.test').length > before);
  await new Promise((r) => setTimeout(r, 1000));
  expect(hooks.requests).toEqual([]);
  await checkNow(server, api, p.monitorId); // resolve the incident
});

test('a subscriber stored before the rule, at a loopback literal, is not posted to', async () => {
  const p = await subscribedPage('legacy');
  const box = createSecretBox(Buffer.from(MASTER_KEY, 'base64'));
  const url = `${hooks.url}/legacy`;
  await server.db.insertInto('status_page_subscribers').values({
    id: 'sub_legacy', page_id: p.id, organization_id: org.organizationId, kind: 'webhook', target: new URL(url).host,
    target_enc: box.seal(url), target_key: hashToken(url).toString('base64url'), confirmed_at: new Date(),
  }).execute();

  failing = true;
  const down = await checkNow(server, api, p.monitorId);
  failing = false;
  expect(down.openIncidentId).toBeTruthy();
  // The job ran to its end (no retry waiting: a refused address is permanent) and posted nothing.
  await until('the status_notify job to finish', async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from graphile_worker.jobs where task_identifier in ('status_news', 'status_notify')`.execute(server.db);
    return rows[0].n === 0;
  });
  expect(hooks.requests).toEqual([]);
});
