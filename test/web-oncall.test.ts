import type { Browser } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { createProbe } from '../src/domain/probes';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { axe, open, shot, signIn, type Watched, closeWatched, startWebTest } from './support/web';

// The read-only pages of part 1 — on-call, maintenance, hosts and probes: who is on call
// now and next in a rotation, and a recurring maintenance window's rule in
// words with its next occurrence; empty states that say what to do; axe-core
// and screenshots in light, dark and at phone width.

const PASSWORD = 'oncall test password 1';
let server: TestServer;
let api: ApiClient;
let browser: Browser;
let email: string;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
const pages: Watched[] = [];

beforeAll(async () => {
  ({ browser, server, org, api } = await startWebTest());
  email = (await server.db.selectFrom('users').select('email').where('id', '=', org.userId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, email, PASSWORD);
  await server.db.updateTable('users').set({ name: 'Ada Owner' }).where('id', '=', org.userId).execute();
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('empty on-call and maintenance pages say what to do next', async () => {
  const w = await open(browser, server.url, { expectedStatuses: [401] });
  pages.push(w);
  await signIn(w.page, server.url, email, PASSWORD);
  await w.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'On-call' }).click();
  await w.page.getByText('No on-call schedule yet.').waitFor();
  expect(await axe(w.page, 'on-call-empty')).toEqual([]);
  await w.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Maintenance' }).click();
  await w.page.getByText('No maintenance window.').waitFor();
  expect(await axe(w.page, 'maintenance-empty')).toEqual([]);
});

test('who is on call now and next; a weekly window in words with its next occurrence', async () => {
  const colleague = await server.member(org.organizationId, 'member');
  await server.db.updateTable('users').set({ name: 'Grace Colleague' }).where('id', '=', colleague.userId).execute();
  ok('createSchedule', await api.post('/on-call/schedules', {
    name: 'Primary', timezone: 'Europe/Paris', shiftLengthHours: 168, handoffTime: '09:00', participantIds: [org.userId, colleague.userId],
  }), 201);
  const monitorId = ok('createMonitor', await api.post('/monitors', {
    name: 'Database', kind: 'tcp', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ host: '127.0.0.1', port: 9 }),
  }), 201).id;
  const start = new Date(Date.now() + 86_400_000);
  ok('createMaintenanceWindow', await api.post('/maintenance', {
    title: 'Weekly database patching', workspaceId: org.workspaceId, monitorIds: [monitorId],
    startsAt: start.toISOString(), endsAt: new Date(start.getTime() + 3_600_000).toISOString(),
    recurrenceRule: 'FREQ=WEEKLY;BYDAY=SU', timezone: 'Europe/Paris',
  }), 201);

  for (const [scheme, width, suffix] of [['light', 1280, 'light'], ['dark', 1280, 'dark'], ['light', 375, 'phone']] as const) {
    const w = await open(browser, server.url, { expectedStatuses: [401], colorScheme: scheme, width });
    pages.push(w);
    const p = w.page;
    await signIn(p, server.url, email, PASSWORD);
    await p.goto(`${server.url}/on-call`);
    const primary = p.getByRole('region', { name: 'Primary' });
    await primary.getByText(/^(Ada Owner|Grace Colleague) until/).waitFor();
    const now = (await primary.getByRole('definition').first().textContent()) ?? '';
    const next = now.startsWith('Ada') ? 'Grace Colleague' : 'Ada Owner';
    await primary.getByRole('definition').filter({ hasText: new RegExp(`^${next}$`) }).waitFor();
    // No confirmed channel reaches either of them yet: said.
    await p.getByRole('alert').getByText(/No confirmed channel reaches/).waitFor();
    expect(await axe(p, `on-call-${suffix}`)).toEqual([]);
    await shot(p, `on-call-${suffix}`);

    await p.goto(`${server.url}/maintenance`);
    await p.getByText('Weekly database patching').waitFor();
    await p.getByText(/Every week on Sunday/).waitFor();
    await p.getByText(/^Next: /).waitFor();
    expect(await axe(p, `maintenance-${suffix}`)).toEqual([]);
    if (width === 375) expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(p, `maintenance-${suffix}`);
  }
}, 120_000);

test('hosts and private probes: empty states, then a host and a probe that never connected', async () => {
  const w = await open(browser, server.url, { expectedStatuses: [401] });
  pages.push(w);
  const p = w.page;
  await signIn(p, server.url, email, PASSWORD);
  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Hosts' }).click();
  await p.getByText('No host yet.').waitFor();
  await p.getByText('No private probe.').waitFor();
  expect(await axe(p, 'hosts-empty')).toEqual([]);

  ok('createHost', await api.post('/hosts', { name: 'db-1.internal', address: '10.0.0.5' }), 201);
  await createProbe(server.db, org.organizationId, 'office');
  await p.reload();
  await p.getByRole('region', { name: 'Hosts' }).getByText('db-1.internal').waitFor();
  const probes = p.getByRole('region', { name: 'Private probes' });
  await probes.getByText('office').waitFor();
  await probes.getByText(/never connected/).waitFor();
  expect(await axe(p, 'hosts')).toEqual([]);
  await shot(p, 'hosts-light');
}, 60_000);
