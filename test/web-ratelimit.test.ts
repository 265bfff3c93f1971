import type { Browser } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';
import { axe, ensureWebBuilt, launch, open, signIn, type Watched } from './support/web';

// Over the organisation's read limit the app says so — a banner with the
// Retry-After countdown — and carries on by itself when the wait is over:
// never a blank page or a spinner that stays.

let server: TestServer;
let browser: Browser;
let w: Watched | undefined;

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  // Five reads a minute: the overview's first visit needs more than that.
  server = await startTestServer({ RATE_LIMIT_READ: '5', RATE_LIMIT_WRITE: '1000' });
}, 180_000);
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.close();
});

test('a 429 shows a banner with the countdown, and the page completes by itself when the wait is over', async () => {
  const org = await server.org({ plan: 'enterprise' });
  const email = (await server.db.selectFrom('users').innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select('users.email').where('memberships.organization_id', '=', org.organizationId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, email, 'rate limit password 1');
  ok('createMonitor', await server.api(org.apiKey).post('/monitors', {
    name: 'Limited', kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ url: 'http://127.0.0.1:9/' }),
  }), 201);

  w = await open(browser, server.url, { expectedStatuses: [401, 429] });
  const p = w.page;
  await signIn(p, server.url, email, 'rate limit password 1');
  const banner = p.getByRole('status').filter({ hasText: 'Too many requests.' });
  await banner.waitFor({ timeout: 15_000 });
  const first = Number(/continues in (\d+) s/.exec((await banner.textContent()) ?? '')![1]);
  expect(first).toBeGreaterThan(0);
  expect(first).toBeLessThanOrEqual(60);
  // The page is there meanwhile, not blank: its heading and what did load.
  await p.getByRole('heading', { name: 'Overview' }).waitFor();
  expect(await axe(p, 'rate-limited overview')).toEqual([]);
  await p.waitForTimeout(2100);
  const later = Number(/continues in (\d+) s/.exec((await banner.textContent()) ?? '')![1]);
  expect(later).toBeLessThan(first);

  // After Retry-After the client's retry goes through: the banner goes and the page is whole.
  await banner.waitFor({ state: 'detached', timeout: 75_000 });
  await p.getByRole('link', { name: 'Limited', exact: true }).waitFor();
  await p.getByRole('img', { name: /Limited: uptime over the last 24 hours/ }).waitFor({ timeout: 15_000 });
  expect(await p.getByText(/^Loading .*…$/).count()).toBe(0);
  // A stream refused with the reads (it counts as one) is opened again as soon as the limit ends.
  await p.getByRole('status').filter({ hasText: 'Live updates are off' }).waitFor({ state: 'detached', timeout: 20_000 });
  expect({ problems: w.problems, foreign: w.foreign }).toEqual({ problems: [], foreign: [] });
}, 150_000);
