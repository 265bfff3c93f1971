/**
 * GET /search black-box over HTTP: hits across types grouped in the
 * contract's order, ranking, limit and input refusals, per-type permissions
 * (an unreadable type is absent), workspace confinement, other organisations,
 * and secrets (header values, bodies, heartbeat tokens, webhook URL tokens,
 * API key tokens and hashes) never matched.
 */
import { createHash } from 'node:crypto';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { SearchService } from '../gen/proto/vigil/v1/search_pb';
import { newId } from '../src/crypto/ids';
import { createProbe } from '../src/domain/probes';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startSmtpServer, type SmtpReceiver } from './support/receivers';

let server: TestServer;
let smtp: SmtpReceiver;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let owner: ApiClient;
let zeta: string; // a second workspace
const ids: Record<string, string> = {};

const HEADER_SECRET = 'hdrsecret7f3a9q';
const BODY_SECRET = 'bodysecret5c2eq';
const HOOK_TOKEN = 'hooktoken9d8e7q';

type Hit = { type: string; id: string; title: string; subtitle: string | null; snippet: string | null; matchedField: string; workspaceId: string | null; path: string };

async function search(api: ApiClient, query: Record<string, string>): Promise<Hit[]> {
  return ok('searchResources', await api.get(`/search?${new URLSearchParams(query)}`));
}
const typesOf = (hits: Hit[]) => [...new Set(hits.map((h) => h.type))];

async function incident(title: string, monitorId: string | null, workspaceId: string, minutesAgo: number, status = 'open') {
  const id = newId('inc');
  await server.db.insertInto('incidents').values({
    id, organization_id: org.organizationId, workspace_id: workspaceId, monitor_id: monitorId, title,
    cause: 'timeout', severity: 'critical', status, started_at: new Date(Date.now() - minutesAgo * 60_000),
  }).execute();
  return id;
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', SMTP_URL: smtp.url, MAIL_FROM: 'Vigil <alerts@vigil.test>' });
  org = await server.org({ plan: 'enterprise' });
  owner = server.api(org.apiKey);
  zeta = ok('createWorkspace', await owner.post('/workspaces', { name: 'Zeta Falcon Clients', clientReference: 'ACME-42' }), 201).id;
  const http = (url: string) => JSON.stringify({ url, method: 'POST', headers: { 'X-Api-Token': HEADER_SECRET }, body: BODY_SECRET });
  ids.checkout = ok('createMonitor', await owner.post('/monitors', {
    name: 'Falcon Checkout', kind: 'http', workspaceId: org.workspaceId, config: http('https://falcon.example.test/checkout'), tags: ['payments', 'falconry'],
  }), 201).id;
  ids.exact = ok('createMonitor', await owner.post('/monitors', { name: 'falcon', kind: 'http', workspaceId: org.workspaceId, config: http('https://f.example.test') }), 201).id;
  ids.inner = ok('createMonitor', await owner.post('/monitors', { name: 'The falcon API', kind: 'http', workspaceId: org.workspaceId, config: http('https://g.example.test') }), 201).id;
  ids.tagged = ok('createMonitor', await owner.post('/monitors', { name: 'Ledger', kind: 'http', workspaceId: org.workspaceId, config: http('https://h.example.test'), tags: ['falcon-team'] }), 201).id;
  ids.zetaMonitor = ok('createMonitor', await owner.post('/monitors', { name: 'Falcon Zeta probe', kind: 'heartbeat', workspaceId: zeta, config: '{}' }), 201).id;
  ids.heartbeatUrl = ok('getMonitorPushUrl', await owner.get(`/monitors/${ids.zetaMonitor}/push-url`)).url;

  ids.incident = await incident('Falcon Checkout is down', ids.checkout, org.workspaceId, 30, 'resolved');
  ids.older = await incident('Falcon Checkout is down', ids.checkout, org.workspaceId, 600);
  // Its monitor was renamed since: found by the monitor's current name only.
  ids.renamed = await incident('Bookkeeping is down', ids.tagged, org.workspaceId, 5);
  ok('setIncidentPostmortem', await owner.put(`/incidents/${ids.incident}/postmortem`, {
    body: `# Root cause\n\nThe payment gateway rejected every request after a certificate rotation went wrong. ${'Filler text. '.repeat(20)}We added a gryphon-style canary.`,
  }));
  ids.zetaIncident = await incident('Falcon Zeta probe is down', ids.zetaMonitor, zeta, 10);

  ids.host = ok('createHost', await owner.post('/hosts', { name: 'falcon-db-1', address: '10.1.2.3', provider: 'Hetzner' }), 201).id;
  ids.page = ok('createStatusPage', await owner.post('/status-pages', { name: 'Falcon Status', workspaceId: org.workspaceId }), 201).id;
  ids.hook = ok('createChannel', await owner.post('/channels', { kind: 'webhook', name: 'Falcon hook', target: `https://hooks.example.test/in/${HOOK_TOKEN}` }), 201).id;
  ids.mail = ok('createChannel', await owner.post('/channels', { kind: 'email', name: 'On-call mail', target: 'falcon-oncall@example.test' }), 201).id;
  ids.zetaChannel = ok('createChannel', await owner.post('/channels', { kind: 'email', name: 'Zeta falcon mail', target: 'z@example.test', workspaceId: zeta }), 201).id;
  ids.maintenance = ok('createMaintenanceWindow', await owner.post('/maintenance', {
    title: 'Falcon database upgrade', workspaceId: org.workspaceId, monitorIds: [ids.checkout],
    startsAt: new Date(Date.now() + 86_400_000).toISOString(), endsAt: new Date(Date.now() + 90_000_000).toISOString(),
  }), 201).id;
  ids.project = ok('createErrorProject', await owner.post('/errors/projects', { name: 'Falcon web', workspaceId: org.workspaceId, platform: 'javascript' }), 201).id;
  ids.issue = newId('iss');
  await server.db.insertInto('error_issues').values({
    id: ids.issue, project_id: ids.project, organization_id: org.organizationId, fingerprint: 'f1', title: 'TypeError: falcon is undefined',
    type: 'TypeError', value: 'falcon is undefined', culprit: 'app/checkout.js', level: 'error', times_seen: 3, first_seen_at: new Date(), last_seen_at: new Date(),
  }).execute();
  ids.site = ok('createAnalyticsSite', await owner.post('/analytics', { name: 'Falcon marketing', domain: 'falcon-site.example.test', workspaceId: org.workspaceId }), 201).id;
  const falconMember = await server.member(org.organizationId, 'member');
  ids.member = falconMember.membershipId;
  await server.db.updateTable('users').set({ name: 'Fay Falconer' }).where('id', '=', falconMember.userId).execute();
  ids.invitation = ok('inviteMember', await owner.post('/members', { email: 'falcon.invitee@example.test', role: 'viewer' }), 201).id;
  const key = ok('createApiKey', await owner.post('/api-keys', { name: 'Falcon deploy key' }), 201);
  ids.key = key.id;
  ids.keyToken = key.token;
  ids.keyPrefix = key.prefix;
  const probe = await createProbe(server.db, org.organizationId, 'Falcon probe Frankfurt');
  ids.probe = probe.probeId;
  ids.probeToken = probe.token;
  const agent = ok('enrollAgent', await owner.post('/agents', { name: 'Falcon agent db-2', workspaceId: null }), 201);
  ids.agent = agent.id;
  ids.agentToken = agent.token;
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

test('hits across every type, grouped by type in the contract order, with their fields', async () => {
  const hits = await search(owner, { q: 'falcon', limit: '20' });
  expect(typesOf(hits)).toEqual(['monitor', 'incident', 'host', 'status_page', 'workspace', 'channel', 'maintenance',
    'error_project', 'error_issue', 'analytics_site', 'member', 'invitation', 'api_key', 'agent', 'probe']);
  const byType = (t: string) => hits.filter((h) => h.type === t);
  // Exact, then prefix (alphabetical), then inside the name, then another field (a tag).
  expect(byType('monitor').map((h) => h.title)).toEqual(['falcon', 'Falcon Checkout', 'Falcon Zeta probe', 'The falcon API', 'Ledger']);
  expect(byType('monitor')[0]).toEqual({
    type: 'monitor', id: ids.exact, title: 'falcon', subtitle: 'http · pending', snippet: null, matchedField: 'title', workspaceId: org.workspaceId, path: `/monitors/${ids.exact}`,
  });
  expect(byType('monitor')[4]).toMatchObject({ id: ids.tagged, matchedField: 'tags', snippet: 'falcon-team' });
  // Incidents: newest first among equal titles; the renamed monitor's incident by its monitor's name.
  expect(byType('incident').map((h) => h.id)).toEqual([ids.zetaIncident, ids.incident, ids.older]);
  expect(byType('host')[0]).toMatchObject({ id: ids.host, title: 'falcon-db-1', subtitle: 'Hetzner · 10.1.2.3', workspaceId: null, path: `/hosts/${ids.host}` });
  expect(byType('workspace')[0]).toMatchObject({ id: zeta, workspaceId: zeta, path: '/workspaces' });
  expect(byType('channel').map((h) => [h.title, h.matchedField, h.snippet])).toEqual([
    ['Falcon hook', 'title', null], ['Zeta falcon mail', 'title', null], ['On-call mail', 'email', 'falcon-oncall@example.test'],
  ]);
  expect(byType('error_issue')[0]).toMatchObject({ id: ids.issue, subtitle: 'Falcon web · unresolved', path: `/errors/issues/${ids.issue}` });
  expect(byType('member')[0]).toMatchObject({ id: ids.member, matchedField: 'name', snippet: 'Fay Falconer', path: '/members' });
  expect(byType('invitation')[0]).toMatchObject({ id: ids.invitation, title: 'falcon.invitee@example.test' });
  expect(byType('api_key')[0]).toMatchObject({ id: ids.key, title: 'Falcon deploy key', subtitle: ids.keyPrefix });
  expect(byType('probe')[0]).toMatchObject({ id: ids.probe, path: '/probes' });
  expect(byType('agent')).toEqual([{ type: 'agent', id: ids.agent, title: 'Falcon agent db-2', subtitle: '', snippet: null, matchedField: 'title', workspaceId: null, path: '/agents' }]);

  const renamed = await search(owner, { q: 'ledger', type: 'incident' });
  expect(renamed.map((h) => [h.id, h.matchedField, h.snippet])).toEqual([[ids.renamed, 'monitorName', 'Ledger']]);
  const byMonitor = await search(owner, { q: 'Checkout', type: 'incident' });
  expect(byMonitor.map((h) => h.id)).toEqual([ids.incident, ids.older]);
});

test('postmortems by the words of their text, with an excerpt around the match', async () => {
  const hits = await search(owner, { q: 'certificate rotat', type: 'postmortem' });
  expect(hits).toHaveLength(1);
  expect(hits[0]).toMatchObject({ type: 'postmortem', id: ids.incident, title: 'Falcon Checkout is down', matchedField: 'body', path: `/incidents/${ids.incident}` });
  expect(hits[0].snippet).toMatch(/^….*certificate rotation went wrong.*…$/);
  expect(hits[0].snippet!.length).toBeLessThanOrEqual(202);
  expect(await search(owner, { q: 'gryphon', type: 'postmortem' })).toHaveLength(1);
  expect(await search(owner, { q: 'rotation nowhere', type: 'postmortem' })).toEqual([]);
  // tsquery syntax in `q` is text: no error, and only punctuation finds nothing.
  expect(await search(owner, { q: "certificate:* & !o'brien \\ (", type: 'postmortem' })).toEqual([]);
  expect(await search(owner, { q: '&|!:*', type: 'postmortem' })).toEqual([]);
  expect((await search(owner, { q: 'CERTIFICATE!', type: 'postmortem' })).map((h) => h.id)).toEqual([ids.incident]);
});

test('type narrows; limit per type; one or two characters match the start of the first field', async () => {
  const two = await search(owner, { q: 'falcon', type: 'host, monitor', limit: '2' });
  expect(two.map((h) => [h.type, h.title])).toEqual([['monitor', 'falcon'], ['monitor', 'Falcon Checkout'], ['host', 'falcon-db-1']]);
  expect(typesOf(await search(owner, { q: 'falcon', type: '' }))).toContain('probe');
  // Other spellings of the identifiers (plural, the endpoint's path, any case) name the same types; hits carry the identifier.
  const spelled = await search(owner, { q: 'falcon', type: 'Hosts,monitors', limit: '2' });
  expect(spelled.map((h) => [h.type, h.title])).toEqual(two.map((h) => [h.type, h.title]));
  expect(typesOf(await search(owner, { q: 'falcon', type: 'api-keys,status-pages,notification-channels,agents' }))).toEqual(
    typesOf(await search(owner, { q: 'falcon', type: 'api_key,status_page,channel,agent' })));
  const short = await search(owner, { q: 'Fa', type: 'monitor', limit: '20' });
  expect(short.map((h) => h.title)).toEqual(['falcon', 'Falcon Checkout', 'Falcon Zeta probe']);
  // Special characters are text, not patterns.
  expect(await search(owner, { q: '%', type: 'monitor' })).toEqual([]);
  expect(await search(owner, { q: 'fal_on', type: 'monitor' })).toEqual([]);
});

test('refusals: q missing or blank, limit outside 1 to 20, an unknown type', async () => {
  const missing = await owner.get('/search');
  expect([missing.status, missing.body.code, missing.body.details.field]).toEqual([400, 'missing_field', 'q']);
  for (const q of ['', '   ']) {
    const blank = await owner.get(`/search?q=${encodeURIComponent(q)}`);
    expect([blank.status, blank.body.code, blank.body.details.field]).toEqual([400, 'invalid_query', 'q']);
  }
  expect((await owner.get(`/search?q=${'x'.repeat(201)}`)).status).toBe(400);
  for (const limit of ['0', '21', 'x']) {
    const r = await owner.get(`/search?q=falcon&limit=${limit}`);
    expect([r.status, r.body.code, r.body.details.field]).toEqual([400, 'invalid_query', 'limit']);
  }
  ok('searchResources', await owner.get('/search?q=falcon&limit=20'));
  const unknown = await owner.get('/search?q=falcon&type=monitor,widget');
  expect([unknown.status, unknown.body.code, unknown.body.vars, unknown.body.details.field]).toEqual([400, 'unknown_search_type', { type: 'widget' }, 'type']);
  expect((await owner.get('/search?q=falcon&type=widgets')).body.code).toBe('unknown_search_type');
  // A documented type with nothing to find answers none.
  expect(await search(owner, { q: 'osprey', type: 'agent' })).toEqual([]);
});

test('a type the key cannot read is absent, exactly like a type without matches', async () => {
  const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
  const seen = typesOf(await search(viewer, { q: 'falcon', limit: '20' }));
  expect(seen).not.toContain('api_key');
  expect(seen).toContain('monitor');
  const scoped = server.api(ok('createApiKey', await owner.post('/api-keys', { name: 'Scoped', scopes: ['monitor:read'] }), 201).token);
  expect(typesOf(await search(scoped, { q: 'falcon', limit: '20' }))).toEqual(['monitor', 'host', 'error_project', 'error_issue', 'analytics_site']);
  const nothing = server.api(ok('createApiKey', await owner.post('/api-keys', { name: 'Billing only', scopes: ['billing:read'] }), 201).token);
  expect(await search(nothing, { q: 'falcon' })).toEqual([]);
  // A member sees their own keys only, as on GET /api-keys.
  const memberKey = server.api((await server.member(org.organizationId, 'member')).apiKey);
  expect(await search(memberKey, { q: 'Falcon deploy', type: 'api_key' })).toEqual([]);
});

test('workspace confinement applies as on each list', async () => {
  const confined = server.api(ok('createApiKey', await owner.post('/api-keys', { name: 'Zeta only', workspaceIds: [zeta] }), 201).token);
  const hits = await search(confined, { q: 'falcon', limit: '20' });
  expect(hits.filter((h) => h.type === 'monitor').map((h) => h.id)).toEqual([ids.zetaMonitor]);
  expect(hits.filter((h) => h.type === 'incident').map((h) => h.id)).toEqual([ids.zetaIncident]);
  expect(hits.filter((h) => h.type === 'workspace').map((h) => h.id)).toEqual([zeta]);
  // Organisation-wide channels stay visible; hosts and probes belong to the organisation.
  expect(hits.filter((h) => h.type === 'channel').map((h) => h.id).sort()).toEqual([ids.hook, ids.mail, ids.zetaChannel].sort());
  expect(typesOf(hits)).toEqual(expect.arrayContaining(['host', 'probe']));
  for (const t of ['status_page', 'maintenance', 'error_project', 'error_issue', 'analytics_site']) expect(typesOf(hits)).not.toContain(t);
  expect(await search(confined, { q: 'certificate', type: 'postmortem' })).toEqual([]);
});

test("another organisation's rows are never found", async () => {
  const other = await server.org({ plan: 'enterprise' });
  const otherApi = server.api(other.apiKey);
  expect(await search(otherApi, { q: 'falcon', limit: '20' })).toEqual([]);
  expect(await search(otherApi, { q: 'certificate', type: 'postmortem' })).toEqual([]);
  ok('createMonitor', await otherApi.post('/monitors', { name: 'Falcon elsewhere', kind: 'heartbeat', workspaceId: other.workspaceId, config: '{}' }), 201);
  expect((await search(owner, { q: 'elsewhere' }))).toEqual([]);
});

test('a secret value is never matched: header, body, heartbeat token, webhook URL token, key and probe tokens, a key hash', async () => {
  const heartbeatToken = new URL(ids.heartbeatUrl).pathname.split('/').filter(Boolean).pop()!;
  const keyHash = createHash('sha256').update(ids.keyToken).digest('hex');
  const secrets = [HEADER_SECRET, BODY_SECRET, heartbeatToken, HOOK_TOKEN, `hooks.example.test/in/${HOOK_TOKEN}`, ids.keyToken, ids.keyToken.slice(12, 30), keyHash, ids.probeToken, ids.agentToken, createHash('sha256').update(ids.agentToken).digest('hex')];
  for (const q of secrets) expect({ q, hits: await search(owner, { q, limit: '20' }) }).toEqual({ q, hits: [] });
  // The shown forms still work: a key by its prefix, a webhook by its name.
  expect((await search(owner, { q: ids.keyPrefix, type: 'api_key' })).map((h) => [h.id, h.matchedField])).toEqual([[ids.key, 'prefix']]);
  const hook = (await search(owner, { q: 'Falcon hook', type: 'channel' }))[0];
  expect(JSON.stringify(hook)).not.toContain(HOOK_TOKEN);
});

test('with more matches than are ranked, exact and prefix matches still come first and recent incidents still rank', async () => {
  const o = await server.org({ plan: 'enterprise' });
  const api = server.api(o.apiKey);
  // 300 monitors with `gnu` inside their names (more than the 200 candidates ranked per field), inserted first.
  await server.db.insertInto('monitors').values(Array.from({ length: 300 }, (_, i) => ({
    id: newId('mon'), organization_id: o.organizationId, workspace_id: o.workspaceId, name: `herd ${i} of gnus`, kind: 'heartbeat', config_enc: 'x', interval_seconds: 300, enabled: false,
  }))).execute();
  const exact = ok('createMonitor', await api.post('/monitors', { name: 'GNU', kind: 'heartbeat', workspaceId: o.workspaceId, config: '{}' }), 201).id;
  const prefixed = ok('createMonitor', await api.post('/monitors', { name: 'gnu-mirror', kind: 'heartbeat', workspaceId: o.workspaceId, config: '{}' }), 201).id;
  expect((await search(api, { q: 'gnu', type: 'monitor', limit: '3' })).map((h) => h.id).slice(0, 2)).toEqual([exact, prefixed]);
  const inner = await search(api, { q: 'of gnus', type: 'monitor', limit: '20' });
  expect(inner).toHaveLength(20);
  expect(inner.every((h) => h.title.includes('of gnus') && h.matchedField === 'title')).toBe(true);
  // 300 old incidents titled alike, then a new one: the newest comes first.
  await server.db.insertInto('incidents').values(Array.from({ length: 300 }, (_, i) => ({
    id: newId('inc'), organization_id: o.organizationId, workspace_id: o.workspaceId, monitor_id: null, title: `Heron ${i} is down`,
    cause: 'timeout', severity: 'critical', status: 'resolved', started_at: new Date(Date.now() - (400 - i) * 3_600_000),
  }))).execute();
  const latest = newId('inc');
  await server.db.insertInto('incidents').values({
    id: latest, organization_id: o.organizationId, workspace_id: o.workspaceId, monitor_id: null, title: 'Heron 9000 is down',
    cause: 'timeout', severity: 'critical', status: 'open', started_at: new Date(),
  }).execute();
  expect((await search(api, { q: 'is down', type: 'incident' }))[0].id).toBe(latest);
});

test('the same hits over Connect (protobuf): absent optional fields, the same order', async () => {
  const rest = await search(owner, { q: 'falcon', type: 'monitor,channel' });
  const client = createClient(SearchService, createConnectTransport({
    baseUrl: `${server.url}/rpc`, httpVersion: '1.1', useBinaryFormat: true,
    interceptors: [(next) => (req) => { req.header.set('authorization', `Bearer ${org.apiKey}`); return next(req); }],
  }));
  const viaConnect = (await client.searchResources({ q: 'falcon', type: 'monitor,channel' })).data;
  expect(viaConnect.map((h) => [h.type, h.id, h.title, h.subtitle ?? null, h.snippet ?? null, h.matchedField, h.workspaceId ?? null, h.path]))
    .toEqual(rest.map((h) => [h.type, h.id, h.title, h.subtitle, h.snippet, h.matchedField, h.workspaceId, h.path]));
});
