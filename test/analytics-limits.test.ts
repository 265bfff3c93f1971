import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// A site takes at most ANALYTICS_EVENTS_PER_SITE_PER_MINUTE events a minute:
// over it events are dropped as Plausible drops throttled ones (202 with
// x-plausible-dropped); an event naming another site under its limit still
// counts there.

let server: TestServer;
let api: ApiClient;
let workspaceId: string;
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

beforeAll(async () => {
  server = await startTestServer({ WORKER: 'true', ANALYTICS_EVENTS_PER_SITE_PER_MINUTE: '5', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
  workspaceId = org.workspaceId;
});
afterAll(async () => { await server.close(); });

const post = (d: string, path = '/') => fetch(`${server.url}/api/event`, {
  method: 'POST', headers: { 'content-type': 'text/plain', 'user-agent': UA }, body: JSON.stringify({ n: 'pageview', u: `https://${d.split(',')[0]}${path}`, d }),
});

test('over the per-site limit: dropped (202, x-plausible-dropped); another site named by the same event still counts it', async () => {
  const a = ok('createAnalyticsSite', await api.post('/analytics', { domain: 'limited.example', workspaceId }), 201) as { id: string };
  const b = ok('createAnalyticsSite', await api.post('/analytics', { domain: 'other.example', workspaceId }), 201) as { id: string };
  for (let i = 0; i < 5; i++) expect((await post('limited.example', `/p${i}`)).status).toBe(202);
  const over = await post('limited.example', '/over');
  expect(over.status).toBe(202);
  expect(over.headers.get('x-plausible-dropped')).toBe('1');
  // Both sites named: the limited one drops it, the other counts it.
  const both = await post('limited.example,other.example', '/both');
  expect(both.status).toBe(202);
  expect(both.headers.get('x-plausible-dropped')).toBe('1');
  const pageviews = async (id: string) => (ok('getAnalyticsSite', await api.get(`/analytics/${id}?days=1`)) as { pageviews: number }).pageviews;
  const until = Date.now() + 10_000;
  while (Date.now() < until && ((await pageviews(a.id)) < 5 || (await pageviews(b.id)) < 1)) await new Promise((r) => setTimeout(r, 100));
  expect([await pageviews(a.id), await pageviews(b.id)]).toEqual([5, 1]);
});
