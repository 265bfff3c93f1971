import http from 'node:http';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startDnsServer, type DnsServer } from './support/dns-server';

// The status-page operations, per the spec and the contract: pages, their
// settings and components, tenancy and confinement, the plan's cap, the
// audit trail (never the password), custom domains proved by DNS, subscribers.

let server: TestServer;
let dns: DnsServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;
let monitorId: string;

/** GET with a Host header of our choice (fetch always sends the URL's). */
function getAs(host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http.get(`${server.url}${path}`, { headers: { ...headers, host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    }).on('error', reject);
  });
}

async function monitor(a: ApiClient, workspaceId: string, name = 'API') {
  return ok('createMonitor', await a.post('/monitors', { name, kind: 'http', workspaceId, config: JSON.stringify({ url: 'http://127.0.0.1:9/' }) }), 201).id as string;
}

async function page(a: ApiClient = api, name = 'Acme Status', workspaceId = org.workspaceId) {
  return ok('createStatusPage', await a.post('/status-pages', { name, workspaceId }), 201);
}

beforeAll(async () => {
  dns = await startDnsServer({});
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', DNS_RESOLVER: dns.address });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
  monitorId = await monitor(api, org.workspaceId);
});
afterAll(async () => {
  await server.close();
  await dns.close();
});

test('create: slug from the name, unique across the service, never changed by a rename; the defaults; listed with its count', async () => {
  const p = await page(api, 'Ünïcode Shop — Status!');
  expect(p).toMatchObject({
    name: 'Ünïcode Shop — Status!', slug: 'unicode-shop-status', visibility: 'public', customDomain: null, domainVerifiedAt: null,
    subscribersEnabled: false, componentCount: 0, workspace: { id: org.workspaceId, name: expect.any(String) }, headline: null, description: null,
    logoUrl: null, customCss: null, hasPassword: false, themeAccent: '#2563eb', language: 'en', historyDays: 90, showResponseTimes: false,
    showIncidentHistory: true, hideServiceBranding: false, groupByHost: false, components: [], url: `${server.url}/status/unicode-shop-status`,
    domainVerification: null,
  });
  const other = await server.org();
  const again = await page(server.api(other.apiKey), 'Ünïcode Shop — Status!', other.workspaceId);
  expect(again.slug).toBe('unicode-shop-status-2');
  const renamed = ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { name: 'Renamed' }));
  expect(renamed).toMatchObject({ name: 'Renamed', slug: 'unicode-shop-status' });
  const list = ok('listStatusPages', await api.get('/status-pages'));
  expect(list.find((x: { id: string }) => x.id === p.id)).toMatchObject({ slug: 'unicode-shop-status', componentCount: 0 });
  // Another organisation's page is 404, never 403.
  expect((await api.get(`/status-pages/${again.id}`)).status).toBe(404);
  expect((await api.patch(`/status-pages/${again.id}`, { name: 'x' })).status).toBe(404);
  expect((await api.delete(`/status-pages/${again.id}`)).status).toBe(404);
});

test('create refuses a missing or blank name and a workspace the key cannot see', async () => {
  expect((await api.post('/status-pages', { workspaceId: org.workspaceId })).body.details.field).toBe('name');
  expect((await api.post('/status-pages', { name: '   ', workspaceId: org.workspaceId })).body.details.field).toBe('name');
  const other = await server.org();
  const r = await api.post('/status-pages', { name: 'x', workspaceId: other.workspaceId });
  expect(r).toMatchObject({ status: 404, body: { details: { field: 'workspaceId' } } });
});

test('every updatable field; the password is never returned; empty PATCH is 400', async () => {
  const p = await page(api, 'Settings');
  const all = {
    headline: 'Everything we run', description: 'Line one\n\nLine two', logoUrl: 'https://cdn.example.com/logo.png', customCss: 'h1{color:#123456}',
    themeAccent: '#AA00ff', language: 'de', historyDays: 30, showResponseTimes: true, showIncidentHistory: false, subscribersEnabled: true,
    hideServiceBranding: true, groupByHost: true, password: 'correct horse battery', visibility: 'password',
  };
  const d = ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, all));
  const { password, ...shown } = all;
  expect(d).toMatchObject({ ...shown, themeAccent: '#aa00ff', hasPassword: true });
  expect(JSON.stringify(d)).not.toContain(password);
  expect(JSON.stringify(ok('getStatusPage', await api.get(`/status-pages/${p.id}`)))).not.toContain(password);
  // null and '' clear; removing the password of a password page is refused.
  expect((await api.patch(`/status-pages/${p.id}`, { password: null })).body.code).toBe('password_required');
  const cleared = ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { headline: null, description: '', logoUrl: null, customCss: '', visibility: 'public', password: '' }));
  expect(cleared).toMatchObject({ headline: null, description: null, logoUrl: null, customCss: null, visibility: 'public', hasPassword: false });
  expect((await api.patch(`/status-pages/${p.id}`, {})).status).toBe(400);
});

test('bad settings are 400 naming the field', async () => {
  const p = await page(api, 'Bad settings');
  const cases: [Record<string, unknown>, string, string?][] = [
    [{ visibility: 'password' }, 'password', 'password_required'],
    [{ visibility: 'secret' }, 'visibility'],
    [{ language: 'xx' }, 'language'],
    [{ language: 'klingon-tlh' }, 'language'],
    [{ logoUrl: 'javascript:alert(1)' }, 'logoUrl'],
    [{ logoUrl: 'https://user:pw@example.com/x.png' }, 'logoUrl'],
    [{ logoUrl: 'not a url' }, 'logoUrl'],
    [{ themeAccent: 'red' }, 'themeAccent'],
    [{ historyDays: 0 }, 'historyDays'],
    [{ historyDays: 366 }, 'historyDays'],
    [{ password: 'short' }, 'password'],
    [{ password: 'x'.repeat(129) }, 'password'],
    [{ name: '' }, 'name'],
    [{ customDomain: 'http://status.example.com' }, 'customDomain'],
    [{ customDomain: '192.0.2.1' }, 'customDomain'],
    [{ customDomain: 'localhost' }, 'customDomain'],
    [{ customDomain: 'bad_label.example.com' }, 'customDomain'],
    [{ showResponseTimes: 'yes' }, 'showResponseTimes'],
  ];
  for (const [body, field, code] of cases) {
    const r = await api.patch(`/status-pages/${p.id}`, body);
    expect({ body, status: r.status, field: r.body.details?.field, ...(code ? { code: r.body.code } : {}) }).toEqual({ body, status: 400, field, ...(code ? { code } : {}) });
  }
});

test('custom CSS cannot leave its <style>; @import is dropped', async () => {
  const p = await page(api, 'Css');
  const d = ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { customCss: 'body{color:red}</style><script>alert(1)</script>@import url(https://evil.example/x.css); a{b:c}' }));
  expect(d.customCss).not.toMatch(/</);
  expect(d.customCss).not.toMatch(/@import/i);
  expect(d.customCss).toContain('a{b:c}');
  const html = await (await fetch(`${server.url}/status/${p.slug}`)).text();
  expect(html.match(/<\/style>/g)).toHaveLength(1);
  expect(html).not.toContain('<script');
});

test('components: a monitor of the page\'s workspace, in order; 409 twice; 400 for another workspace; 404 for another organisation; removal by query or body', async () => {
  const p = await page(api, 'Components');
  const second = await monitor(api, org.workspaceId, 'Second');
  const a = ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId, displayName: 'Public API' }), 201);
  const b = ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId: second }), 201);
  expect([a.position, b.position]).toEqual([0, 1]);
  expect(b.displayName).toBeNull();
  expect((await api.post(`/status-pages/${p.id}/components`, { monitorId })).status).toBe(409);
  const ws = ok('createWorkspace', await api.post('/workspaces', { name: 'Elsewhere' }), 201);
  const elsewhere = await monitor(api, ws.id, 'Elsewhere');
  expect(await api.post(`/status-pages/${p.id}/components`, { monitorId: elsewhere })).toMatchObject({ status: 400, body: { details: { field: 'monitorId' } } });
  const other = await server.org();
  const foreign = await monitor(server.api(other.apiKey), other.workspaceId);
  expect(await api.post(`/status-pages/${p.id}/components`, { monitorId: foreign })).toMatchObject({ status: 404, body: { details: { field: 'monitorId' } } });
  expect((await api.post(`/status-pages/${p.id}/components`, {})).body.details.field).toBe('monitorId');
  const detail = ok('getStatusPage', await api.get(`/status-pages/${p.id}`));
  expect(detail.components.map((c: { id: string }) => c.id)).toEqual([a.id, b.id]);
  expect(detail.componentCount).toBe(2);

  expect((await api.delete(`/status-pages/${p.id}/components`)).body.details.field).toBe('componentId');
  expect((await api.delete(`/status-pages/${p.id}/components?component=spc_nothing`)).status).toBe(404);
  ok('removeStatusPageComponent', await api.delete(`/status-pages/${p.id}/components?component=${a.id}`));
  ok('removeStatusPageComponent', await api.delete(`/status-pages/${p.id}/components`, { componentId: b.id }));
  expect(ok('getStatusPage', await api.get(`/status-pages/${p.id}`)).components).toEqual([]);
  // A component is a monitor on the page: the monitor's id names it too (query or body); the answer carries the component's id.
  const c = ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId }), 201);
  expect(ok('removeStatusPageComponent', await api.delete(`/status-pages/${p.id}/components?component=${monitorId}`))).toEqual({ id: c.id, deleted: true });
  ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId: second }), 201);
  ok('removeStatusPageComponent', await api.delete(`/status-pages/${p.id}/components`, { componentId: second }));
  expect(ok('getStatusPage', await api.get(`/status-pages/${p.id}`)).componentCount).toBe(0);
  // A monitor that is not on this page is 404 like an unknown component.
  expect((await api.delete(`/status-pages/${p.id}/components?component=${monitorId}`)).status).toBe(404);
  // Deleting a monitor takes it off every page.
  ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId: second }), 201);
  ok('deleteMonitor', await api.delete(`/monitors/${second}`));
  expect(ok('getStatusPage', await api.get(`/status-pages/${p.id}`)).componentCount).toBe(0);
});

test('confined keys see and change only their workspaces\' pages; viewers read but cannot change', async () => {
  const ws = ok('createWorkspace', await api.post('/workspaces', { name: 'Client A' }), 201);
  const inside = await page(api, 'Client A status', ws.id);
  const outside = await page(api, 'Main status');
  const confined = server.api((await server.member(org.organizationId, 'admin', [ws.id])).apiKey);
  const ids = ok('listStatusPages', await confined.get('/status-pages')).map((x: { id: string }) => x.id);
  expect(ids).toContain(inside.id);
  expect(ids).not.toContain(outside.id);
  expect((await confined.get(`/status-pages/${outside.id}`)).status).toBe(404);
  expect((await confined.patch(`/status-pages/${outside.id}`, { name: 'x' })).status).toBe(404);
  expect((await confined.post('/status-pages', { name: 'x', workspaceId: org.workspaceId })).status).toBe(404);
  // A monitor outside the key's workspaces does not exist for it.
  expect((await confined.post(`/status-pages/${inside.id}/components`, { monitorId })).status).toBe(404);
  const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
  expect(ok('getStatusPage', await viewer.get(`/status-pages/${inside.id}`)).id).toBe(inside.id);
  const refused = await viewer.patch(`/status-pages/${inside.id}`, { name: 'x' });
  expect(refused).toMatchObject({ status: 403, body: { vars: { permission: 'status_page:manage' } } });
  expect((await viewer.get(`/status-pages/${inside.id}/subscribers`)).status).toBe(403);
});

test('the plan caps the number of pages: 402 limit_reached', async () => {
  const free = await server.org({ plan: 'free' });
  const fa = server.api(free.apiKey);
  await page(fa, 'Only one', free.workspaceId);
  const r = await fa.post('/status-pages', { name: 'Two', workspaceId: free.workspaceId });
  expect(r).toMatchObject({ status: 402, body: { code: 'limit_reached', vars: { plan: 'free', limit: '1', current: '1', resource: 'status pages' } } });
});

test('every change is audited, the password and the CSS only as changed', async () => {
  const p = await page(api, 'Audited');
  await api.patch(`/status-pages/${p.id}`, { password: 'a secret password', customCss: 'body{}', headline: 'Hi' });
  ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId }), 201);
  const entries = ok('listAuditEntries', await api.get('/audit?limit=200')).filter((e: { resourceId: string }) => e.resourceId === p.id);
  const actions = entries.map((e: { action: string }) => e.action);
  expect(actions).toEqual(expect.arrayContaining(['status_page.created', 'status_page.updated', 'status_page.component_added']));
  const updated = entries.find((e: { action: string }) => e.action === 'status_page.updated');
  expect(updated.changes).toMatchObject({ password: { changed: true }, customCss: { changed: true }, headline: { from: null, to: 'Hi' } });
  expect(JSON.stringify(entries)).not.toContain('a secret password');
  ok('deleteStatusPage', await api.delete(`/status-pages/${p.id}`));
  expect((await api.get(`/status-pages/${p.id}`)).status).toBe(404);
  expect((await fetch(`${server.url}/status/${p.slug}`)).status).toBe(404);
  const after = ok('listAuditEntries', await api.get('/audit?limit=200')).map((e: { action: string; resourceId: string }) => `${e.action}:${e.resourceId}`);
  expect(after).toContain(`status_page.deleted:${p.id}`);
});

test('custom domain: a TXT record proves it; one page per domain; tls/ask and Host routing follow verification', async () => {
  const p = await page(api, 'Domain');
  ok('addStatusPageComponent', await api.post(`/status-pages/${p.id}/components`, { monitorId, displayName: 'Domain API' }), 201);
  expect((await api.post(`/status-pages/${p.id}/domain-verification`)).body.code).toBe('no_custom_domain');
  const d = ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { customDomain: 'Status.Example.COM.' }));
  expect(d).toMatchObject({ customDomain: 'status.example.com', domainVerifiedAt: null });
  expect(d.domainVerification).toMatchObject({
    domain: 'status.example.com', recordName: '_vigil.status.example.com', recordType: 'TXT', recordValue: expect.stringMatching(/^vigil-verify=/),
    verified: false, checkedAt: null, found: [], error: null,
  });
  const ask = (domain: string) => fetch(`${server.url}/tls/ask?domain=${domain}`).then((r) => r.status);
  const viaHost = () => getAs('status.example.com', '/');
  expect(await ask('status.example.com')).toBe(404);

  const missing = ok('verifyStatusPageDomain', await api.post(`/status-pages/${p.id}/domain-verification`));
  expect(missing).toMatchObject({ verified: false, found: [], error: expect.stringMatching(/_vigil\.status\.example\.com/) });
  dns.zone['_vigil.status.example.com'] = { TXT: ['something else'] };
  expect(ok('verifyStatusPageDomain', await api.post(`/status-pages/${p.id}/domain-verification`))).toMatchObject({ verified: false, found: ['something else'] });
  dns.zone['_vigil.status.example.com'] = { TXT: ['something else', d.domainVerification.recordValue] };
  const done = ok('verifyStatusPageDomain', await api.post(`/status-pages/${p.id}/domain-verification`));
  expect(done).toMatchObject({ verified: true, verifiedAt: expect.any(String), error: null });
  expect(ok('getStatusPage', await api.get(`/status-pages/${p.id}`)).domainVerifiedAt).toBe(done.verifiedAt);
  expect(await ask('status.example.com')).toBe(200);
  expect(await ask('other.example.com')).toBe(404);
  // A private page is served nowhere: its domain gets no certificate either; a password page shows its form there, so it does.
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { visibility: 'private' }));
  expect(await ask('status.example.com')).toBe(404);
  expect(await ask('Status.Example.com.')).toBe(404);
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { visibility: 'password', password: 'a page password' }));
  expect(await ask('status.example.com')).toBe(200);
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { visibility: 'public', password: null }));
  expect(await ask('status.example.com')).toBe(200);
  const root = await viaHost();
  expect(root.status).toBe(200);
  expect(root.text).toContain('Domain API');
  const json = JSON.parse((await getAs('status.example.com', '/api/v2/summary.json')).text);
  expect(json.page.url).toBe('http://status.example.com');
  // Nothing else of Vigil answers on a status page's domain.
  expect((await getAs('status.example.com', '/api/v1/me', { authorization: `Bearer ${org.apiKey}` })).status).toBe(404);

  const other = await page(api, 'Other domain');
  const taken = await api.patch(`/status-pages/${other.id}`, { customDomain: 'status.example.com' });
  expect(taken).toMatchObject({ status: 409, body: { code: 'custom_domain_taken', details: { field: 'customDomain' } } });
  // Changing the domain starts over: a new token, unverified, and the old domain stops being served.
  const moved = ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { customDomain: 'status2.example.com' }));
  expect(moved.domainVerifiedAt).toBeNull();
  expect(moved.domainVerification.recordValue).not.toBe(d.domainVerification.recordValue);
  expect(await ask('status.example.com')).toBe(404);
  // The old domain no longer shows the page (it is any other name of the server now: the web app may answer there).
  expect((await viaHost()).text).not.toContain('Domain API');
  expect((await getAs('status.example.com', '/api/v2/summary.json')).status).toBe(404);
});

test('subscribers are listed (webhooks by host only) and removed by query or body', async () => {
  const p = await page(api, 'Subscribed');
  ok('updateStatusPage', await api.patch(`/status-pages/${p.id}`, { subscribersEnabled: true }));
  const post = (body: unknown) => fetch(`${server.url}/status/${p.slug}/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // Public address literals (TEST-NET-3, never contacted here): a name would need a resolver answering for it.
  expect((await post({ webhook: 'https://203.0.113.10/secret-path?token=abc' })).status).toBe(201);
  expect((await post({ webhook: 'https://203.0.113.11/other' })).status).toBe(201);
  const list = ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`));
  expect(list).toHaveLength(2);
  expect(list[1]).toMatchObject({ kind: 'webhook', target: '203.0.113.10', confirmed: true });
  expect(JSON.stringify(list)).not.toContain('secret-path');
  expect((await api.delete(`/status-pages/${p.id}/subscribers`)).body.details.field).toBe('subscriberId');
  expect((await api.delete(`/status-pages/${p.id}/subscribers?subscriber=sub_nothing`)).status).toBe(404);
  ok('removeStatusPageSubscriber', await api.delete(`/status-pages/${p.id}/subscribers?subscriber=${list[0].id}`));
  ok('removeStatusPageSubscriber', await api.delete(`/status-pages/${p.id}/subscribers`, { subscriberId: list[1].id }));
  expect(ok('listStatusPageSubscribers', await api.get(`/status-pages/${p.id}/subscribers`))).toEqual([]);
});
