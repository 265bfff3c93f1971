import type { Browser, Page } from 'playwright-core';
import { DateTime } from 'luxon';
import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { axe, closeWatched, open, shot, signIn, type Watched, startWebTest } from './support/web';

// Maintenance windows in the browser: a weekly window on two days planned in
// another time zone than the browser's (Europe/Paris), its rule in words and
// its next occurrences before saving, stored as two windows with the right
// rule, zone and instants; changed in place (the same id, only the fields
// changed sent), one in progress changed and still in progress, an ended one
// opened; deleted, and one in progress ended early;
// the server's refusal at its field; a viewer without a control; a member
// confined to one workspace choosing among its monitors only; axe-core on
// every state and screenshots in light, dark and at phone width.

const PASSWORD = 'maintenance test password 1';
const NY = 'America/New_York';
const TITLE = 'Weekly database patching';
let server: TestServer;
let api: ApiClient;
let browser: Browser;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let email: string;
const monitors: Record<string, string> = {};
const pages: Watched[] = [];

/** The Tuesday, at least three days ahead, that the planned window starts on (New York's calendar). */
const tuesday = (() => {
  let d = DateTime.now().setZone(NY).plus({ days: 3 }).startOf('day');
  while (d.weekday !== 2) d = d.plus({ days: 1 });
  return d;
})();
const at = (day: DateTime, hour: number, minute = 0) => day.set({ hour, minute }).toUTC().toISO();
const local = (day: DateTime, hm: string) => `${day.toFormat('yyyy-LL-dd')}T${hm}`;

async function userWithPassword(userId: string): Promise<string> {
  const address = (await server.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, address, PASSWORD);
  return address;
}

async function monitor(name: string, workspaceId: string): Promise<string> {
  return ok('createMonitor', await api.post('/monitors', {
    name, kind: 'tcp', workspaceId, intervalSeconds: 3600, config: JSON.stringify({ host: '127.0.0.1', port: 9 }),
  }), 201).id;
}

/** A one-off window on Web front, made through the API, from `fromMs` to `toMs` from now. */
async function oneOff(title: string, fromMs: number, toMs: number) {
  const now = Date.now();
  return ok('createMaintenanceWindow', await api.post('/maintenance', {
    title, workspaceId: org.workspaceId, monitorIds: [monitors['Web front']],
    startsAt: new Date(now + fromMs).toISOString(), endsAt: new Date(now + toMs).toISOString(), timezone: 'Europe/Paris',
  }), 201);
}

async function listed(): Promise<any[]> {
  return ok('listMaintenanceWindows', await api.get('/maintenance'));
}

async function signedIn(opts: Parameters<typeof open>[2] = {}, who = email): Promise<Page> {
  const w = await open(browser, server.url, { expectedStatuses: [401], ...opts });
  pages.push(w);
  await signIn(w.page, server.url, who, PASSWORD);
  return w.page;
}

beforeAll(async () => {
  ({ browser, server, org, api } = await startWebTest());
  email = await userWithPassword(org.userId);
  for (const name of ['Database primary', 'Database replica', 'Web front']) monitors[name] = await monitor(name, org.workspaceId);
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('a weekly window on Tuesday and Thursday, planned in New York time: in words, its next occurrences, stored as chosen', async () => {
  const p = await signedIn();
  await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Maintenance' }).click();
  await p.getByText('No maintenance window.').waitFor();
  expect(await axe(p, 'maintenance-empty')).toEqual([]);
  await p.getByRole('link', { name: 'Plan a window' }).first().click();
  await p.getByRole('heading', { name: 'New maintenance window' }).waitFor();
  // The browser's own zone is the default.
  expect(await p.getByLabel('Time zone').inputValue()).toBe('Europe/Paris');
  expect(await axe(p, 'maintenance-new')).toEqual([]);

  await p.getByLabel('Title', { exact: true }).fill(TITLE);
  await p.getByLabel('Filter monitors').fill('primary');
  expect(await p.getByRole('checkbox', { name: 'Web front' }).count()).toBe(0);
  await p.getByRole('checkbox', { name: 'Database primary' }).check();
  await p.getByLabel('Filter monitors').fill('');
  await p.getByText('1 chosen: Database primary.').waitFor();
  await p.getByLabel('Time zone').selectOption(NY);
  await p.getByLabel('Starts', { exact: true }).fill(local(tuesday, '02:00'));
  await p.getByLabel('Ends', { exact: true }).fill(local(tuesday, '03:30'));
  await p.getByLabel('Repeats').selectOption('weekly');
  // The start's own weekday is chosen by itself; Thursday is added.
  expect(await p.getByRole('checkbox', { name: 'Tuesday' }).isChecked()).toBe(true);
  await p.getByRole('checkbox', { name: 'Thursday' }).check();

  const preview = p.getByRole('region', { name: 'Preview' });
  await preview.getByText(/^Every week on Tuesday, Thursday/).waitFor();
  await preview.getByText(`(${NY})`).first().waitFor();
  await preview.getByText('Saved as 2 windows, one per weekday.').waitFor();
  // The next five occurrences at 02:00 New York time, whatever Paris' or New York's summer time.
  const expected = [0, 1, 2].flatMap((k) => [tuesday.plus({ weeks: k }), tuesday.plus({ weeks: k, days: 2 })]).slice(0, 5)
    .map((d) => DateTime.fromISO(at(d, 2)!).toJSDate().toISOString());
  await preview.getByRole('listitem').nth(4).waitFor();
  const shown = await preview.getByRole('listitem').evaluateAll((lis) => lis.map((li) => li.querySelector('time')!.getAttribute('datetime')));
  expect(shown).toEqual(expected);
  expect(await axe(p, 'maintenance-preview')).toEqual([]);

  await p.getByRole('button', { name: 'Create the window' }).click();
  await p.getByRole('heading', { name: 'Maintenance' }).waitFor();
  const list = p.getByRole('region', { name: 'Maintenance windows' });
  await list.getByText(/^Every week on Tuesday/).waitFor();
  await list.getByText(/^Every week on Thursday/).waitFor();
  expect(await axe(p, 'maintenance-list')).toEqual([]);

  const stored = (await listed()).filter((w) => w.title === TITLE)
    .map((w) => ({ rule: w.recurrenceRule, timezone: w.timezone, startsAt: Date.parse(w.startsAt), endsAt: Date.parse(w.endsAt), monitorIds: w.monitorIds, keepChecking: w.keepChecking, next: Date.parse(w.nextOccurrence.startsAt) }))
    .sort((a, b) => a.startsAt - b.startsAt);
  const thursday = tuesday.plus({ days: 2 });
  expect(stored).toEqual([
    { rule: 'FREQ=WEEKLY;BYDAY=TU', timezone: NY, startsAt: Date.parse(at(tuesday, 2)!), endsAt: Date.parse(at(tuesday, 3, 30)!), monitorIds: [monitors['Database primary']], keepChecking: true, next: Date.parse(at(tuesday, 2)!) },
    { rule: 'FREQ=WEEKLY;BYDAY=TH', timezone: NY, startsAt: Date.parse(at(thursday, 2)!), endsAt: Date.parse(at(thursday, 3, 30)!), monitorIds: [monitors['Database primary']], keepChecking: true, next: Date.parse(at(thursday, 2)!) },
  ]);
}, 120_000);

test('a window changed in the browser: every field kept or changed as asked', async () => {
  const before = (await listed()).find((w) => w.recurrenceRule === 'FREQ=WEEKLY;BYDAY=TU');
  const p = await signedIn();
  await p.goto(`${server.url}/maintenance`);
  await p.getByRole('listitem').filter({ hasText: 'Every week on Tuesday' }).getByRole('link', { name: `Edit ${TITLE}` }).click();
  await p.getByRole('heading', { name: `Edit ${TITLE}` }).waitFor();
  // The stored window as the form shows it: New York wall-clock time, the weekly rule on its day.
  expect(await p.getByLabel('Time zone').inputValue()).toBe(NY);
  expect(await p.getByLabel('Starts', { exact: true }).inputValue()).toBe(local(tuesday, '02:00'));
  expect(await p.getByLabel('Repeats').inputValue()).toBe('weekly');
  expect(await p.getByRole('checkbox', { name: 'Tuesday' }).isChecked()).toBe(true);
  expect(await p.getByRole('checkbox', { name: 'Thursday' }).isChecked()).toBe(false);
  expect(await p.getByRole('checkbox', { name: 'Database primary' }).isChecked()).toBe(true);
  expect(await axe(p, 'maintenance-edit')).toEqual([]);

  await p.getByLabel('Title', { exact: true }).fill('Database patching (Tuesday)');
  await p.getByLabel('Description (optional)').fill('Kernel updates, one node at a time.');
  await p.getByRole('checkbox', { name: 'Database replica' }).check();
  await p.getByLabel('Ends', { exact: true }).fill(local(tuesday, '04:00'));
  await p.getByLabel('Every how many weeks').fill('2');
  await p.getByRole('radio', { name: /^Pause checks/ }).check();
  await p.getByRole('checkbox', { name: 'Show on status pages' }).uncheck();
  await p.getByRole('region', { name: 'Preview' }).getByText(/^Every 2 weeks on Tuesday/).waitFor();
  await p.getByRole('button', { name: 'Save changes' }).click();
  const row = p.getByRole('listitem').filter({ hasText: 'Database patching (Tuesday)' });
  await row.getByText(/^Every 2 weeks on Tuesday/).waitFor();
  await row.getByText('Kernel updates, one node at a time.').waitFor();
  await row.getByText(/checks paused/).waitFor();

  // Changed in place: the same id, read on its own.
  const after = ok('getMaintenanceWindow', await api.get(`/maintenance/${before.id}`));
  expect((await listed()).filter((w) => w.title === 'Database patching (Tuesday)').map((w) => w.id)).toEqual([before.id]);
  expect({
    rule: after.recurrenceRule, timezone: after.timezone, startsAt: Date.parse(after.startsAt), endsAt: Date.parse(after.endsAt),
    monitorIds: [...after.monitorIds].sort(), keepChecking: after.keepChecking, showOnStatusPage: after.showOnStatusPage,
    notifySubscribers: after.notifySubscribers, description: after.description, workspaceId: after.workspaceId,
  }).toEqual({
    rule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU', timezone: NY, startsAt: Date.parse(at(tuesday, 2)!), endsAt: Date.parse(at(tuesday, 4)!),
    monitorIds: [monitors['Database primary'], monitors['Database replica']].sort(), keepChecking: false, showOnStatusPage: false,
    notifySubscribers: false, description: 'Kernel updates, one node at a time.', workspaceId: org.workspaceId,
  });
}, 120_000);

test('a window in progress changed in place stays in progress; an ended one opens', async () => {
  const live = await oneOff('Disk swap', -600_000, 3_000_000);
  const p = await signedIn();
  await p.goto(`${server.url}/maintenance`);
  const row = p.getByRole('listitem').filter({ hasText: 'Disk swap' });
  await row.getByText('In progress').waitFor();
  await row.getByRole('link', { name: 'Edit Disk swap' }).click();
  await p.getByRole('heading', { name: 'Edit Disk swap' }).waitFor();
  await p.getByText(/^This window is in progress/).waitFor();
  expect(await axe(p, 'maintenance-edit-in-progress')).toEqual([]);
  await p.getByLabel('Title', { exact: true }).fill('Disk swap, rack 2');
  await p.getByRole('button', { name: 'Save changes' }).click();
  await p.getByRole('listitem').filter({ hasText: 'Disk swap, rack 2' }).getByText('In progress').waitFor();
  // Only the title was sent: the times, to the millisecond (the form shows minutes), the id and the state are as they were.
  const after = ok('getMaintenanceWindow', await api.get(`/maintenance/${live.id}`));
  expect({ id: after.id, title: after.title, active: after.active, startsAt: Date.parse(after.startsAt), endsAt: Date.parse(after.endsAt) })
    .toEqual({ id: live.id, title: 'Disk swap, rack 2', active: true, startsAt: Date.parse(live.startsAt), endsAt: Date.parse(live.endsAt) });
  ok('deleteMaintenanceWindow', await api.delete(`/maintenance?id=${live.id}`));

  // A window that is over is not listed, and still opens by its address.
  const ended = await oneOff("Last week's upgrade", -8 * 86_400_000, -8 * 86_400_000 + 3_600_000);
  await p.goto(`${server.url}/maintenance/${ended.id}/edit`);
  await p.getByRole('heading', { name: "Edit Last week's upgrade" }).waitFor();
  expect(await p.getByLabel('Title', { exact: true }).inputValue()).toBe("Last week's upgrade");
  ok('deleteMaintenanceWindow', await api.delete(`/maintenance?id=${ended.id}`));
}, 60_000);

test('the server\'s refusal is shown at its field', async () => {
  const w = await open(browser, server.url, { expectedStatuses: [401, 400] });
  pages.push(w);
  const p = w.page;
  await signIn(p, server.url, email, PASSWORD);
  await p.goto(`${server.url}/maintenance/new`);
  await p.getByLabel('Title', { exact: true }).fill('Backwards');
  await p.getByRole('checkbox', { name: 'Web front' }).check();
  await p.getByLabel('Starts', { exact: true }).fill(local(tuesday, '05:00'));
  await p.getByLabel('Ends', { exact: true }).fill(local(tuesday, '04:00'));
  await p.getByRole('button', { name: 'Create the window' }).click();
  const ends = p.getByLabel('Ends', { exact: true });
  await p.getByText('must be after startsAt').waitFor();
  expect(await ends.getAttribute('aria-invalid')).toBe('true');
  // The reason is the field's description, so a screen reader says it with the field.
  const described = await ends.getAttribute('aria-describedby');
  expect(await p.locator(`[id="${described}"]`).textContent()).toBe('must be after startsAt');
  expect(await p.getByRole('heading', { name: 'New maintenance window' }).count()).toBe(1);
  expect(await axe(p, 'maintenance-field-error')).toEqual([]);
  expect((await listed()).some((x) => x.title === 'Backwards')).toBe(false);
}, 60_000);

test('deleted with a confirmation; a window in progress ended early', async () => {
  await oneOff('Router swap', -600_000, 3_000_000);
  const p = await signedIn();
  await p.goto(`${server.url}/maintenance`);
  const swap = p.getByRole('listitem').filter({ hasText: 'Router swap' });
  await swap.getByText('In progress').waitFor();
  expect(await axe(p, 'maintenance-in-progress')).toEqual([]);

  // Asked in place; Cancel: nothing happens, and the focus is back on the button.
  await swap.getByRole('button', { name: 'End now Router swap' }).click();
  const ask = swap.getByRole('group', { name: 'End now Router swap' });
  await ask.getByText(/^End “Router swap” now\? Alerting resumes at once/).waitFor();
  expect(await axe(p, 'maintenance-end-question')).toEqual([]);
  await ask.getByRole('button', { name: 'Cancel' }).click();
  await swap.getByRole('button', { name: 'End now Router swap' }).waitFor();
  expect(await p.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('End now Router swap');
  expect((await listed()).some((x) => x.title === 'Router swap')).toBe(true);
  await swap.getByRole('button', { name: 'End now Router swap' }).click();
  await ask.getByRole('button', { name: 'End it now' }).click();
  await swap.waitFor({ state: 'detached' });
  expect((await listed()).some((x) => x.title === 'Router swap')).toBe(false);

  const tuesdays = p.getByRole('listitem').filter({ hasText: 'Database patching (Tuesday)' });
  await tuesdays.getByRole('button', { name: 'Delete Database patching (Tuesday)' }).click();
  const del = tuesdays.getByRole('group', { name: 'Delete Database patching (Tuesday)' });
  await del.getByText('Delete “Database patching (Tuesday)” and all its occurrences?').waitFor();
  await del.getByRole('button', { name: 'Delete it' }).click();
  await tuesdays.waitFor({ state: 'detached' });
  expect((await listed()).map((x) => x.title)).toEqual([TITLE]);
}, 60_000);

test('a viewer sees the windows and no control to plan, change or delete one', async () => {
  const viewer = await server.member(org.organizationId, 'viewer');
  const p = await signedIn({}, await userWithPassword(viewer.userId));
  await p.goto(`${server.url}/maintenance`);
  await p.getByRole('region', { name: 'Maintenance windows' }).getByText(TITLE).waitFor();
  expect(await p.getByRole('link', { name: /Plan a window|^Edit/ }).count()).toBe(0);
  expect(await p.getByRole('main').getByRole('button').count()).toBe(0);
  expect(await axe(p, 'maintenance-viewer')).toEqual([]);
  await p.goto(`${server.url}/maintenance/new`);
  await p.getByRole('alert').getByText('Your role cannot plan maintenance windows.').waitFor();
  expect(await p.getByRole('main').getByRole('textbox').count()).toBe(0);
  expect(await axe(p, 'maintenance-viewer-new')).toEqual([]);
}, 60_000);

test('a member confined to one workspace plans a window among its monitors only', async () => {
  const teamB = ok('createWorkspace', await api.post('/workspaces', { name: 'Team B' }), 201).id;
  const teamApi = await monitor('Team B API', teamB);
  const member = await server.member(org.organizationId, 'member', [teamB]);
  const p = await signedIn({}, await userWithPassword(member.userId));
  await p.goto(`${server.url}/maintenance`);
  // The owner's windows are in the default workspace: not the member's to see.
  await p.getByText('No maintenance window.').waitFor();
  await p.getByRole('link', { name: 'Plan a window' }).first().click();
  await p.getByRole('heading', { name: 'New maintenance window' }).waitFor();
  // One workspace visible: no choice to make.
  expect(await p.getByLabel('Workspace').count()).toBe(0);
  const boxes = await p.getByRole('group', { name: 'Monitors' }).getByRole('checkbox').evaluateAll((els) => els.map((e) => e.parentElement!.textContent));
  expect(boxes).toEqual(['Team B API']);
  await p.getByLabel('Title', { exact: true }).fill('Team B deploy');
  await p.getByRole('checkbox', { name: 'Team B API' }).check();
  await p.getByLabel('Repeats').selectOption('daily');
  await p.getByRole('region', { name: 'Preview' }).getByText(/^Every day/).waitFor();
  await p.getByRole('button', { name: 'Create the window' }).click();
  await p.getByRole('region', { name: 'Maintenance windows' }).getByText('Team B deploy').waitFor();
  const made = (await listed()).find((w) => w.title === 'Team B deploy');
  expect({ workspaceId: made.workspaceId, monitorIds: made.monitorIds, rule: made.recurrenceRule, timezone: made.timezone })
    .toEqual({ workspaceId: teamB, monitorIds: [teamApi], rule: 'FREQ=DAILY', timezone: 'Europe/Paris' });
}, 60_000);

test('screenshots: the list and the form in light, dark and at phone width', async () => {
  for (const [scheme, width, suffix] of [['light', 1280, 'light'], ['dark', 1280, 'dark'], ['light', 375, 'phone']] as const) {
    const p = await signedIn({ colorScheme: scheme, width });
    await p.goto(`${server.url}/maintenance`);
    await p.getByRole('region', { name: 'Maintenance windows' }).getByText(/^Every week on Thursday/).waitFor();
    expect(await axe(p, `maintenance-list-${suffix}`)).toEqual([]);
    if (width === 375) expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(p, `maintenance-list-${suffix}`);

    await p.goto(`${server.url}/maintenance/new`);
    await p.getByLabel('Title', { exact: true }).fill('Failover drill');
    await p.getByRole('checkbox', { name: 'Database replica' }).check();
    await p.getByLabel('Time zone').selectOption(NY);
    await p.getByLabel('Repeats').selectOption('weekly');
    await p.getByRole('checkbox', { name: 'Saturday' }).check();
    await p.getByRole('region', { name: 'Preview' }).getByRole('listitem').nth(4).waitFor();
    expect(await axe(p, `maintenance-form-${suffix}`)).toEqual([]);
    if (width === 375) expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(p, `maintenance-form-${suffix}`);
  }
}, 120_000);
