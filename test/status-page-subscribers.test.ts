import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { checkNow } from './support/monitors';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';
import { tempDir } from './support/child';

// Subscribers of a status page, end to end: e-mail double opt-in on a local
// SMTP server (nothing before the link is followed), the news they get
// (opening, published updates, resolution, maintenance created and started),
// one-click unsubscribe, webhook subscribers, and news queued while no worker
// runs delivered later.
//
// The webhooks here go to a receiver on loopback, which the strict policy of
// visitors' webhooks refuses (status-page-subscriber-webhooks.test.ts tests
// that, unrelaxed); this file is about what subscribers are told, so in it the
// strict policy lets loopback through.
jest.mock('../src/net/policy', () => ({ ...jest.requireActual('../src/net/policy'), STRICT_POLICY: { allowPrivate: true, extraCa: [] } }));

const MASTER_KEY = Buffer.alloc(32, 7).toString('base64');
let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let smtp: SmtpReceiver;
let hooks: HttpReceiver;
let target: http.Server;
let targetUrl: string;
const failing = new Set<string>();

async function monitor(name: string) {
  return ok('createMonitor', await api.post('/monitors', {
    name, kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600,
    config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 5 }),
  }), 201).id as string;
}

async function subscribedPage(name: string, monitorId: string) {
  const p = ok('createStatusPage', await api.post('/status-pages', { name, workspaceId: org.workspaceId }), 201);
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { subscribersEnabled: true }));
  ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId, displayName: `${name} API` }), 201);
  return p as { id: string; slug: string };
}

/** Posts the page's subscribe form as a browser does. */
async function subscribeForm(slug: string, fields: Record<string, string>) {
  const res = await fetch(`${server.url}/status/${slug}/subscribe`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, text: await res.text() };
}

const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));
const linkIn = (text: string, marker: string) => text.split(/\s+/).find((w) => w.includes(marker))!;

async function openIncident(monitorId: string, name: string) {
  failing.add(name);
  const down = await checkNow(server, api, monitorId);
  expect(down.openIncidentId).toBeTruthy();
  return down.openIncidentId as string;
}

async function resolveIncident(monitorId: string, name: string) {
  failing.delete(name);
  const up = await checkNow(server, api, monitorId);
  expect(up.openIncidentId).toBeNull();
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  hooks = await startHttpReceiver();
  target = http.createServer((req, res) => {
    res.statusCode = [...failing].some((f) => req.url === `/${f}`) ? 503 : 200;
    res.end('x');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', MASTER_KEY, SMTP_URL: smtp.url, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await smtp.close();
  await hooks.close();
  await new Promise((r) => target.close(r));
});

test('e-mail: a confirmation only, then opening, published updates and resolution, each with one-click unsubscribe; unsubscribing stops them', async () => {
  const web = await monitor('shop');
  await checkNow(server, api, web);
  const p = await subscribedPage('Shop', web);
  const alice = 'alice@example.test';

  const form = await subscribeForm(p.slug, { email: alice });
  expect(form.status).toBe(202);
  expect(form.text).toContain(alice); // the confirmation step names the address
  const [confirmation] = await smtp.waitFor(1);
  expect(confirmation.to).toEqual([alice]);
  expect(confirmation.subject).toContain('Shop');
  const confirmLink = linkIn(confirmation.text, '/subscribers/confirm/');
  expect(confirmLink.startsWith(`${server.url}/status/${p.slug}/subscribers/confirm/sc_`)).toBe(true);

  // Subscribing again within a minute sends nothing more and says the same.
  expect((await subscribeForm(p.slug, { email: alice })).status).toBe(202);
  // An outage before the link is followed: the unconfirmed address hears nothing of it.
  const first = await openIncident(web, 'shop');
  await new Promise((r) => setTimeout(r, 1500));
  expect(mailsTo(alice)).toHaveLength(1);
  const listed = ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`));
  expect(listed).toEqual([expect.objectContaining({ kind: 'email', target: alice, confirmed: false, confirmedAt: null })]);

  const confirmed = await fetch(confirmLink);
  expect(confirmed.status).toBe(200);
  expect(await confirmed.text()).toContain('Shop');
  expect((await fetch(confirmLink)).status).toBe(404); // one use
  expect(ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`))[0]).toMatchObject({ confirmed: true });

  // A published update of the open incident reaches the subscriber; an internal comment does not.
  ok('updateIncident', await api.patch(`/incidents/${first}`, { comment: 'Internal: paging the DBA' }));
  ok('updateIncident', await api.patch(`/incidents/${first}`, { comment: 'We are restoring the checkout service.', publish: true }));
  const [, update] = await smtp.waitFor(2);
  expect(update.to).toEqual([alice]);
  expect(update.text).toContain('We are restoring the checkout service.');
  expect(update.text).not.toContain('DBA');
  expect(update.text).not.toContain(targetUrl);
  const unsubscribeLink = update.headers['list-unsubscribe'].replace(/^<|>$/g, '');
  expect(unsubscribeLink.startsWith(`${server.url}/status/${p.slug}/unsubscribe/`)).toBe(true);
  expect(update.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
  expect(update.text).toContain(unsubscribeLink);
  expect(update.text).toContain(`${server.url}/status/${p.slug}`);

  await resolveIncident(web, 'shop');
  const [, , resolved] = await smtp.waitFor(3);
  expect(resolved.subject).toMatch(/resolved/i);

  const second = await openIncident(web, 'shop');
  const [, , , opened] = await smtp.waitFor(4);
  expect(opened.subject).toMatch(/Shop/);
  expect(opened.text).toContain('Shop API');
  expect(opened.text).not.toContain(targetUrl);

  // Mail scanners follow links with GET: that only asks. RFC 8058 one-click is a POST.
  const ask = await fetch(unsubscribeLink);
  expect(ask.status).toBe(200);
  expect(await ask.text()).toContain('<form method="post"');
  expect(ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`))).toHaveLength(1);
  const oneClick = await fetch(unsubscribeLink, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
  expect(oneClick.status).toBe(200);
  expect(ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`))).toEqual([]);
  const tampered = unsubscribeLink.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
  expect((await fetch(tampered)).status).toBe(404);

  ok('updateIncident', await api.patch(`/incidents/${second}`, { comment: 'Still working on it.', publish: true }));
  await resolveIncident(web, 'shop');
  await new Promise((r) => setTimeout(r, 2000));
  expect(mailsTo(alice)).toHaveLength(4);
});

test('webhook subscribers get JSON news with the page, the incident and an unsubscribe link; the operator lists and removes them', async () => {
  const web = await monitor('hooked');
  await checkNow(server, api, web);
  const p = await subscribedPage('Hooked', web);
  const res = await fetch(`${server.url}/status/${p.slug}/subscribe`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ webhook: `${hooks.url}/news?token=s3cret` }),
  });
  expect(res.status).toBe(201);
  const [sub] = ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`));
  // Only the host is ever shown: the URL may carry a token.
  expect(sub).toMatchObject({ kind: 'webhook', target: new URL(hooks.url).host, confirmed: true });
  expect(JSON.stringify(sub)).not.toContain('s3cret');

  const incident = await openIncident(web, 'hooked');
  const [news] = await hooks.waitFor(1);
  expect(news.path).toBe('/news?token=s3cret');
  expect(news.json).toMatchObject({
    type: 'incident.opened', page: { id: p.id, name: 'Hooked', url: `${server.url}/status/${p.slug}` },
    incident: { id: incident, status: 'open' }, maintenance: null,
  });
  expect(news.json.unsubscribeUrl.startsWith(`${server.url}/status/${p.slug}/unsubscribe/`)).toBe(true);
  expect(news.body).not.toContain(targetUrl);

  // Bad input to the public form: a clear error naming the field.
  const bad = await fetch(`${server.url}/status/${p.slug}/subscribe`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ webhook: 'ftp://example.test/x' }),
  });
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({ code: 'invalid_field', details: { field: 'webhook' } });

  const removed = await api.delete(`/status-pages/${p.id}/subscribers?subscriber=${sub.id}`);
  expect(removed.status).toBe(200);
  expect(ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`))).toEqual([]);
  expect((await api.delete(`/status-pages/${p.id}/subscribers?subscriber=${sub.id}`)).status).toBe(404);
  await resolveIncident(web, 'hooked');
  await new Promise((r) => setTimeout(r, 1500));
  expect(hooks.requests.filter((r) => r.path.startsWith('/news'))).toHaveLength(1);
});

test('maintenance with notifySubscribers: announced when created and again when it starts', async () => {
  const web = await monitor('upkeep');
  const p = await subscribedPage('Upkeep', web);
  const bob = 'bob@example.test';
  expect((await subscribeForm(p.slug, { email: bob })).status).toBe(202);
  await until('the confirmation', async () => mailsTo(bob).length === 1);
  expect((await fetch(linkIn(mailsTo(bob)[0].text, '/subscribers/confirm/'))).status).toBe(200);

  const startsAt = new Date(Date.now() + 3000);
  ok('createMaintenanceWindow', await api.post('/maintenance', {
    title: 'Database upgrade', description: 'Read-only for a few minutes.', workspaceId: org.workspaceId, monitorIds: [web],
    startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString(), timezone: 'UTC', notifySubscribers: true,
  }), 201);
  ok('createMaintenanceWindow', await api.post('/maintenance', {
    title: 'Quiet window', workspaceId: org.workspaceId, monitorIds: [web],
    startsAt: startsAt.toISOString(), endsAt: new Date(startsAt.getTime() + 3_600_000).toISOString(), timezone: 'UTC',
  }), 201);
  await until('the announcement', async () => mailsTo(bob).length >= 2);
  const announced = mailsTo(bob)[1];
  expect(announced.subject).toContain('Database upgrade');
  expect(announced.text).toContain('Read-only for a few minutes.');
  expect(Date.now()).toBeLessThan(startsAt.getTime());
  await until('the start', async () => mailsTo(bob).length >= 3, 15_000);
  const started = mailsTo(bob)[2];
  expect(started.subject).toContain('Database upgrade');
  expect(started.subject).not.toEqual(announced.subject);
  expect(Date.now()).toBeGreaterThanOrEqual(startsAt.getTime());
  expect(started.headers['list-unsubscribe']).toBeTruthy();
  await new Promise((r) => setTimeout(r, 1000));
  expect(mailsTo(bob).filter((m) => m.subject.includes('Quiet window'))).toEqual([]);
});

test('news made while no worker runs is delivered once one does', async () => {
  const web = await monitor('later');
  await checkNow(server, api, web);
  const p = await subscribedPage('Later', web);
  expect((await fetch(`${server.url}/status/${p.slug}/subscribe`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ webhook: `${hooks.url}/later` }),
  })).status).toBe(201);
  const incident = await openIncident(web, 'later');
  await until('the opening', async () => hooks.requests.some((r) => r.path === '/later' && r.json?.type === 'incident.opened'));

  // An API-only process publishes an update: the news waits in the queue in PostgreSQL.
  const dir = tempDir('vigil-api-only-');
  const apiOnly = await startServer(loadConfig({ DATABASE_URL: server.databaseUrl, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER: 'false', MASTER_KEY, RATE_LIMIT_WRITE: '100000' }), createLogger('silent'));
  try {
    const res = await fetch(`${apiOnly.url}/api/v1/incidents/${incident}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ comment: 'Queued while the worker was away.', publish: true }),
    });
    expect(res.status).toBe(200);
  } finally {
    await apiOnly.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await until('the queued update', async () => hooks.requests.some((r) => r.path === '/later' && r.json?.text === 'Queued while the worker was away.'));
  const update = hooks.requests.find((r) => r.path === '/later' && r.json?.type === 'incident.updated')!;
  expect(update.json.incident.id).toBe(incident);
});
