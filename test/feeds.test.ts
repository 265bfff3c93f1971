/**
 * Incident feeds (spec: Events; contract: getIncidentFeed, rotateIncidentFeed,
 * revokeIncidentFeed), black-box: the token's lifecycle through the API, and
 * the RSS and Atom URLs it unlocks, with their content, 404s and rate limit.
 */
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok } from './support/expect';

let srv: TestServer;
let owner: ApiClient;
let orgId: string;
let ws2: string;
const ids = { a: 'inc_feedtestaaaaaaaaaaaaa', b: 'inc_feedtestbbbbbbbbbbbbb', other: 'inc_feedtestotherorgxxxxx' };
const POSTMORTEM = 'POSTMORTEM-never-in-feed';
const INTERNAL = 'INTERNAL-note-never-in-feed';
const httpConfig = JSON.stringify({ url: 'https://feed-secret-host.example/health', assertions: [{ type: 'status_code', operator: 'lt', value: '400' }] });

interface Fetched { status: number; headers: Headers; text: string }
async function get(url: string, method = 'GET'): Promise<Fetched> {
  const res = await fetch(url, { method });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Asserts that `xml` is well-formed enough: one root, every tag closed in order. */
function wellFormed(xml: string): void {
  expect(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>')).toBe(true);
  const body = xml.replace(/^<\?xml[^>]*\?>/, '').replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '');
  expect(body).not.toMatch(/<!\[CDATA\[|\]\]>/);
  const stack: string[] = [];
  let roots = 0;
  for (const [tag, close, name, , selfClose] of body.matchAll(/<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/g)) {
    if (close) expect(stack.pop()).toBe(name);
    else if (!selfClose) { if (!stack.length) roots++; stack.push(name); }
    expect(tag).not.toContain('<<');
  }
  expect(stack).toEqual([]);
  expect(roots).toBe(1);
  expect(body.replace(/<[^>]*>/g, '')).not.toMatch(/[<>]|&(?!(amp|lt|gt|quot|apos|#\d+);)/);
}

const blocks = (xml: string, tag: string) => [...xml.matchAll(new RegExp(`<${tag}>[\\s\\S]*?</${tag}>`, 'g'))].map((m) => m[0]);
const inner = (block: string, tag: string) => new RegExp(`<${tag}(?: [^>]*)?>([\\s\\S]*?)</${tag}>`).exec(block)?.[1];

async function rotate(api: ApiClient = owner) {
  return ok('rotateIncidentFeed', await api.post('/incident-feed'), 201) as { rssUrl: string; atomUrl: string; createdAt: string };
}

beforeAll(async () => {
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const o = await srv.org();
  orgId = o.organizationId;
  owner = srv.api(o.apiKey);
  ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: 'Second' }), 201).id;
  const m1 = ok('createMonitor', await owner.post('/monitors', { name: 'Checkout <API> & co', kind: 'http', workspaceId: o.workspaceId, config: httpConfig }), 201).id;
  const m2 = ok('createMonitor', await owner.post('/monitors', { name: 'Billing worker', kind: 'http', workspaceId: ws2, config: httpConfig }), 201).id;
  const other = await srv.org();
  const now = Date.now();
  await srv.db.insertInto('incidents').values([
    { id: ids.a, organization_id: orgId, workspace_id: o.workspaceId, monitor_id: m1, title: 't', cause: 'timeout', severity: 'critical', status: 'resolved',
      started_at: new Date(now - 7_200_000), acknowledged_at: new Date(now - 6_000_000), resolved_at: new Date(now - 3_600_000), postmortem_body: POSTMORTEM },
    { id: ids.b, organization_id: orgId, workspace_id: ws2, monitor_id: m2, title: 't', cause: 'dns_failure', severity: 'major', status: 'open', started_at: new Date(now - 600_000) },
    { id: ids.other, organization_id: other.organizationId, workspace_id: other.workspaceId, monitor_id: null, title: 'Other org incident', cause: 'manual', severity: 'minor', status: 'open' },
  ]).execute();
  await srv.db.insertInto('incident_events').values([
    { id: 'evt_feed1', incident_id: ids.a, organization_id: orgId, kind: 'comment', at: new Date(now - 7_000_000), message: 'Upstream <b>timeouts</b> ]]> investigating', public: true },
    { id: 'evt_feed2', incident_id: ids.a, organization_id: orgId, kind: 'comment', at: new Date(now - 6_900_000), message: INTERNAL, public: false },
    { id: 'evt_feed3', incident_id: ids.a, organization_id: orgId, kind: 'comment', at: new Date(now - 5_000_000), message: 'Fixed by rolling back', public: true },
  ]).execute();
});
afterAll(() => srv.close());

describe('the token through the API', () => {
  it('GET shows whether a feed exists and since when; rotate shows both URLs once', async () => {
    expect(ok('getIncidentFeed', await owner.get('/incident-feed'))).toEqual({ active: false, createdAt: null });
    const urls = await rotate();
    const base = `${srv.url}/feeds/incidents/`;
    expect(urls.rssUrl).toMatch(new RegExp(`^${base}ft_[A-Za-z0-9_-]{43}/feed\\.xml$`));
    expect(urls.atomUrl).toBe(urls.rssUrl.replace(/feed\.xml$/, 'atom.xml'));
    const res = await owner.get('/incident-feed');
    expect(ok('getIncidentFeed', res)).toEqual({ active: true, createdAt: urls.createdAt });
    expect(JSON.stringify(res.body)).not.toContain('ft_');
  });

  it('a confined key reads the status but may neither rotate nor revoke (403 workspace_confined)', async () => {
    const confined = srv.api((await srv.member(orgId, 'member', [ws2])).apiKey);
    ok('getIncidentFeed', await confined.get('/incident-feed'));
    for (const res of [await confined.post('/incident-feed'), await confined.delete('/incident-feed')]) {
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'workspace_confined' });
    }
  });

  it('a viewer (no notification_channel:manage) gets 403 on rotate and revoke', async () => {
    const viewer = srv.api((await srv.member(orgId, 'viewer')).apiKey);
    ok('getIncidentFeed', await viewer.get('/incident-feed'));
    for (const res of [await viewer.post('/incident-feed'), await viewer.delete('/incident-feed')]) {
      expect({ status: res.status, code: res.body.code, permission: res.body.vars?.permission })
        .toEqual({ status: 403, code: 'forbidden', permission: 'notification_channel:manage' });
    }
  });
});

describe('the feed content', () => {
  let urls: { rssUrl: string; atomUrl: string };
  beforeAll(async () => { urls = await rotate(); });

  function noSecrets(text: string) {
    for (const s of [POSTMORTEM, INTERNAL, 'feed-secret-host', 'Other org incident', ids.other, 'ft_', 'probe', 'region']) expect(text).not.toContain(s);
  }

  it('RSS 2.0: every workspace, newest first, public updates only, nothing private', async () => {
    const res = await get(urls.rssUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('vary')).toBe('Accept, Content-Type');
    wellFormed(res.text);
    expect(res.text).toContain('<rss version="2.0"');
    const items = blocks(res.text, 'item');
    expect(items.map((i) => inner(i, 'guid'))).toEqual([ids.b, ids.a]);
    expect(items[0]).toContain('<guid isPermaLink="false">');
    const [b, a] = items;
    expect(inner(b, 'title')).toBe('<![CDATA[Billing worker — open]]>');
    expect(inner(a, 'title')).toBe('<![CDATA[Checkout <API> & co — resolved]]>');
    expect(inner(a, 'link')).toBe(srv.url);
    const { started_at: startA } = await srv.db.selectFrom('incidents').select('started_at').where('id', '=', ids.a).executeTakeFirstOrThrow();
    expect(inner(a, 'pubDate')).toBe(startA.toUTCString());
    expect(a).toContain('Cause: timeout');
    expect(a).toContain('Severity: critical');
    expect(a).toContain('Status: resolved');
    expect(a).toContain(`Started: ${startA.toISOString()}`);
    expect(b).toContain('Ended: ongoing');
    expect(a).toContain('Upstream &lt;b&gt;timeouts&lt;/b&gt; ]]&gt; investigating');
    expect(a).toContain('Fixed by rolling back');
    expect(b).not.toContain('Updates:');
    noSecrets(res.text);
  });

  it('Atom: the same entries with ids, published and updated times', async () => {
    const res = await get(urls.atomUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    wellFormed(res.text);
    expect(res.text).toContain('<feed xmlns="http://www.w3.org/2005/Atom">');
    const entries = blocks(res.text, 'entry');
    expect(entries.map((e) => inner(e, 'id'))).toEqual([`urn:vigil:incident:${ids.b}`, `urn:vigil:incident:${ids.a}`]);
    const row = await srv.db.selectFrom('incidents').select(['started_at', 'resolved_at']).where('id', '=', ids.a).executeTakeFirstOrThrow();
    expect(inner(entries[1], 'published')).toBe(row.started_at.toISOString());
    expect(inner(entries[1], 'updated')).toBe(row.resolved_at!.toISOString());
    expect(inner(entries[0], 'updated')).toBe(inner(entries[0], 'published'));
    expect(entries[1]).toContain('Fixed by rolling back');
    noSecrets(res.text);
  });

  it('HEAD answers like GET without a body', async () => {
    const res = await get(urls.rssUrl, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8');
    expect(res.text).toBe('');
  });
});

describe('replaced, revoked and never-valid tokens', () => {
  it('all answer the same 404, from the next request on', async () => {
    const never = await get(`${srv.url}/feeds/incidents/ft_${'A'.repeat(43)}/feed.xml`);
    expect(never.status).toBe(404);
    expect(JSON.parse(never.text).code).toBe('not_found');
    for (const bad of ['garbage', `vk_${'A'.repeat(43)}`, 'ft_short']) {
      expect(await get(`${srv.url}/feeds/incidents/${bad}/atom.xml`)).toMatchObject({ status: 404, text: never.text });
    }
    const old = await rotate();
    expect((await get(old.rssUrl)).status).toBe(200);
    const fresh = await rotate();
    for (const url of [old.rssUrl, old.atomUrl]) expect(await get(url)).toMatchObject({ status: 404, text: never.text });
    for (const url of [fresh.rssUrl, fresh.atomUrl]) expect((await get(url)).status).toBe(200);
    expect(ok('revokeIncidentFeed', await owner.delete('/incident-feed'))).toEqual({ ok: true });
    for (const url of [fresh.rssUrl, fresh.atomUrl]) expect(await get(url)).toMatchObject({ status: 404, text: never.text });
    expect(ok('getIncidentFeed', await owner.get('/incident-feed'))).toEqual({ active: false, createdAt: null });
    expect(ok('revokeIncidentFeed', await owner.delete('/incident-feed'))).toEqual({ ok: true });
  });
});

/** 60 requests pass on `url`, the 61st is 429 with Retry-After. */
async function exhaust(url: string, expected = 200) {
  for (let i = 0; i < 60; i++) expect((await get(url)).status).toBe(expected);
  const res = await get(url);
  expect(res.status).toBe(429);
  expect(JSON.parse(res.text).code).toBe('rate_limited');
  const after = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(after) && after >= 1 && after <= 60).toBe(true);
}

describe('the per-URL rate limit', () => {
  it('the 61st request within a minute on one URL is 429; the other URL keeps its own budget', async () => {
    const urls = await rotate();
    await exhaust(urls.rssUrl);
    expect((await get(urls.atomUrl)).status).toBe(200);
  });

  it('an unknown token is counted like a valid one', async () => {
    await exhaust(`${srv.url}/feeds/incidents/ft_${'B'.repeat(43)}/feed.xml`, 404);
  });

  it('holds on the postgres store as well', async () => {
    const pgSrv = await startTestServer({ RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
    try {
      const urls = ok('rotateIncidentFeed', await pgSrv.api((await pgSrv.org()).apiKey).post('/incident-feed'), 201);
      await exhaust(urls.atomUrl);
    } finally {
      await pgSrv.close();
    }
  });
});

describe('the audit log', () => {
  it('records created, replaced and revoked without the token', async () => {
    const o = await srv.org();
    const api = srv.api(o.apiKey);
    const tokens = [await rotate(api), await rotate(api)].map((u) => /ft_[A-Za-z0-9_-]{43}/.exec(u.rssUrl)![0]);
    ok('revokeIncidentFeed', await api.delete('/incident-feed'));
    const entries = ok('listAuditEntries', await api.get('/audit?limit=200')).filter((e: any) => e.resourceType === 'incident_feed');
    expect(entries.map((e: any) => [e.action, e.resourceId, e.changes])).toEqual([
      ['incident_feed.revoked', null, { active: { from: true, to: false } }],
      ['incident_feed.replaced', null, { token: { changed: true } }],
      ['incident_feed.created', null, { active: { from: false, to: true } }],
    ]);
    const text = JSON.stringify(entries);
    for (const t of tokens) expect(text).not.toContain(t);
    expect(text).not.toContain('ft_');
  });
});
