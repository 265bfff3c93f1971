import type { Browser, Page } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { axe, closeWatched, open, shot, signIn, type Watched, startWebTest } from './support/web';

// On-call written in the browser: a schedule of two members created through
// its form (the browser's zone by default, the order of the rotation as
// chosen), who is on call now and next, a cover taking effect, an escalation
// policy of two steps created, edited in place (the same id) and deleted, the
// schedule edited in place (its id, its cover and the policy paging it kept)
// and deleted; what the server stored is read back through the API each time.
// The server's refusals at their field; a viewer without a single write
// control; a member confined to a workspace offered what the server allows,
// and its 403 shown in its words where the server refuses. axe-core on every state;
// screenshots light, dark and at 375 px.

const PASSWORD = 'oncall edit password 1';
let server: TestServer;
let api: ApiClient;
let browser: Browser;
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let grace: { userId: string; membershipId: string; apiKey: string };
let monitorId: string;
const pages: Watched[] = [];

async function person(userId: string, name: string): Promise<string> {
  await server.db.updateTable('users').set({ name }).where('id', '=', userId).execute();
  const { email } = await server.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow();
  await setPassword(server.db, email, PASSWORD);
  return email;
}

/** A signed-in page; `statuses` are the refusals the scenario provokes. */
async function signedIn(email: string, opts: { colorScheme?: 'light' | 'dark'; width?: number; statuses?: number[] } = {}): Promise<Page> {
  const w = await open(browser, server.url, { expectedStatuses: [401, ...(opts.statuses ?? [])], colorScheme: opts.colorScheme, width: opts.width });
  pages.push(w);
  await signIn(w.page, server.url, email, PASSWORD);
  return w.page;
}

const onCall = async () => ok('getOnCall', await api.get('/on-call'));
const noAxe = async (p: Page, label: string) => expect(await axe(p, label)).toEqual([]);

/** The elements sticking out of the viewport's width (none at 375 px), described by tag and text. */
const wider = (p: Page) => p.evaluate(() => [...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .map((e) => `${e.tagName} ${(e.textContent ?? '').slice(0, 40)}`));

let ownerEmail: string;
beforeAll(async () => {
  ({ browser, server, org, api } = await startWebTest());
  ownerEmail = await person(org.userId, 'Ada Owner');
  grace = await server.member(org.organizationId, 'member');
  await person(grace.userId, 'Grace Colleague');
  monitorId = ok('createMonitor', await api.post('/monitors', {
    name: 'Database', kind: 'tcp', workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify({ host: '127.0.0.1', port: 9 }),
  }), 201).id;
}, 180_000);
afterEach(() => closeWatched(pages));
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('a schedule, a cover and an escalation policy: created, edited and deleted in the browser', async () => {
  const p = await signedIn(ownerEmail, { statuses: [400] });
  await p.goto(`${server.url}/on-call`);
  await p.getByText('No on-call schedule yet.').waitFor();
  await p.getByText('No escalation policy yet.').waitFor();
  await noAxe(p, 'on-call-edit-empty');

  // The schedule: the browser's zone by default; Grace added first, then Ada moved above her.
  await p.getByRole('link', { name: 'New schedule' }).click();
  await p.getByRole('heading', { name: 'New schedule' }).waitFor();
  expect(await p.getByLabel('Time zone').inputValue()).toBe('Europe/Paris');
  await p.getByLabel('Person to add').selectOption(grace.userId);
  await p.getByRole('button', { name: 'Add to the rotation' }).click();
  await p.getByLabel('Person to add').selectOption(org.userId);
  await p.getByRole('button', { name: 'Add to the rotation' }).click();
  await p.getByRole('button', { name: 'Move Ada Owner up' }).click();
  expect(await p.getByRole('group', { name: 'Participants' }).getByRole('listitem').allTextContents()).toEqual([
    expect.stringMatching(/^Ada Owner/), expect.stringMatching(/^Grace Colleague/)]);
  await p.getByLabel('Shift length (hours)').fill('24');
  await p.getByLabel('Handoff time').fill('09:00');
  // Blank but for spaces: the browser lets it through, the server refuses it at the field.
  await p.getByLabel('Name', { exact: true }).fill('   ');
  await p.getByRole('button', { name: 'Create the schedule' }).click();
  const nameError = p.getByText('must be 1 to 100 characters');
  await nameError.waitFor();
  expect(await p.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
  expect(await p.getByRole('alert').count()).toBe(0); // at the field, not (also) in a banner
  await noAxe(p, 'schedule-new-refused');
  await shot(p, 'on-call-schedule-form-light');
  await p.getByLabel('Name', { exact: true }).fill('Primary');
  await p.getByRole('button', { name: 'Create the schedule' }).click();

  // The rotation starts with the first participant: Ada now, Grace next.
  const primary = p.getByRole('region', { name: 'Primary' });
  await primary.getByText(/^Ada Owner until/).waitFor();
  await primary.getByRole('definition').filter({ hasText: /^Grace Colleague$/ }).waitFor();
  let stored = await onCall();
  expect(stored.schedules).toEqual([expect.objectContaining({
    name: 'Primary', timezone: 'Europe/Paris', shiftLengthHours: 24, handoffTime: '09:00', workspaceId: null,
    participants: [expect.objectContaining({ userId: org.userId }), expect.objectContaining({ userId: grace.userId })],
  })]);
  const firstScheduleId = stored.schedules[0]!.id;
  await noAxe(p, 'on-call-edit-schedule');

  // A cover by Grace from now for a day (the form's default times, in the browser's zone): she is on call at once.
  await p.getByRole('button', { name: 'Add a cover for Primary' }).click();
  await p.getByLabel('Who covers').selectOption(grace.userId);
  await noAxe(p, 'on-call-edit-cover-form');
  await p.getByRole('button', { name: 'Add the cover' }).click();
  await primary.getByText(/^Grace Colleague \(cover\) until/).waitFor();
  stored = await onCall();
  expect(stored.overrides).toEqual([expect.objectContaining({ scheduleId: firstScheduleId, user: expect.objectContaining({ userId: grace.userId }) })]);
  const cover = stored.overrides[0]!;
  expect(Date.parse(cover.endsAt) - Date.parse(cover.startsAt)).toBe(86_400_000);
  expect(Math.abs(Date.parse(cover.startsAt) - Date.now())).toBeLessThan(120_000);
  expect(stored.onCallNow[0]).toEqual(expect.objectContaining({ viaOverride: true, user: expect.objectContaining({ userId: grace.userId }) }));

  // An escalation policy of two steps; steps out of time order are refused at the second step's field.
  await p.getByRole('link', { name: 'New escalation policy' }).click();
  await p.getByRole('heading', { name: 'New escalation policy' }).waitFor();
  await p.getByLabel('Name', { exact: true }).fill('Database down');
  await p.getByLabel('Step 1: after (minutes)').fill('30');
  expect(await p.getByLabel('Step 1: who').inputValue()).toBe(firstScheduleId);
  await p.getByRole('button', { name: 'Add a step' }).click();
  await p.getByLabel('Step 2: notify').selectOption('user');
  await p.getByLabel('Step 2: who').selectOption(grace.userId);
  await p.getByLabel('Step 2: after (minutes)').fill('10');
  await p.getByLabel('Repeat the steps (times)').fill('2');
  await p.getByRole('checkbox', { name: 'Database' }).check();
  await p.getByRole('button', { name: 'Create the policy' }).click();
  await p.getByText("must not be less than the previous step's").waitFor();
  expect(await p.getByLabel('Step 2: after (minutes)').getAttribute('aria-invalid')).toBe('true');
  await noAxe(p, 'policy-new-refused');
  await shot(p, 'on-call-policy-form-light');
  await p.getByLabel('Step 2: after (minutes)').fill('45');
  await p.getByRole('button', { name: 'Create the policy' }).click();
  const policies = p.getByRole('region', { name: 'Escalation policies' });
  await policies.getByText(/after 30 min, the on-call person of Primary; after 45 min, Grace Colleague; repeated 2×/).waitFor();
  await policies.getByText('For Database').waitFor();
  stored = await onCall();
  const policyId = stored.escalationPolicies[0]!.id;
  expect(stored.escalationPolicies).toEqual([expect.objectContaining({
    name: 'Database down', repeat: 2, monitorIds: [monitorId],
    steps: [expect.objectContaining({ afterMinutes: 30, targetType: 'schedule', targetId: firstScheduleId }),
      expect.objectContaining({ afterMinutes: 45, targetType: 'user', targetId: grace.userId })],
  })]);
  await noAxe(p, 'on-call-edit-full');
  await shot(p, 'on-call-edit-light');

  // Editing the policy: a new name and a single step.
  await p.getByRole('link', { name: 'Edit Database down' }).click();
  await p.getByRole('heading', { name: 'Edit escalation policy' }).waitFor();
  expect(await p.getByLabel('Step 2: who').inputValue()).toBe(grace.userId);
  await p.getByLabel('Name', { exact: true }).fill('Database escalation');
  await p.getByRole('button', { name: 'Remove step 2' }).click();
  await noAxe(p, 'policy-edit');
  await p.getByRole('button', { name: 'Save the policy' }).click();
  await policies.getByText(/Database escalation/).waitFor();
  stored = await onCall();
  expect(stored.escalationPolicies).toEqual([expect.objectContaining({
    id: policyId, name: 'Database escalation', repeat: 2, monitorIds: [monitorId],
    steps: [expect.objectContaining({ afterMinutes: 30, targetType: 'schedule', targetId: firstScheduleId })],
  })]);

  // Editing the schedule changes it in place: its id, its cover and the policy's step stay.
  await p.getByRole('link', { name: 'Edit Primary' }).click();
  await p.getByRole('heading', { name: 'Edit schedule' }).waitFor();
  expect(await p.getByLabel('Handoff time').inputValue()).toBe('09:00');
  expect(await p.getByLabel('For').isDisabled()).toBe(true);
  await p.getByLabel('Name', { exact: true }).fill('Primary rota');
  expect(await p.getByText(/^Saving restarts the rotation/).count()).toBe(0); // a new name alone does not
  await p.getByLabel('Shift length (hours)').fill('168');
  await p.getByText(/^Saving restarts the rotation from now/).waitFor();
  await noAxe(p, 'schedule-edit');
  await p.getByRole('button', { name: 'Save the schedule' }).click();
  const rota = p.getByRole('region', { name: 'Primary rota' });
  await rota.getByText(/^Grace Colleague \(cover\) until/).waitFor();
  stored = await onCall();
  expect(stored.schedules).toEqual([expect.objectContaining({ name: 'Primary rota', shiftLengthHours: 168, timezone: 'Europe/Paris' })]);
  const scheduleId = stored.schedules[0]!.id;
  expect(scheduleId).toBe(firstScheduleId);
  expect(stored.overrides).toEqual([expect.objectContaining({ id: cover.id, scheduleId, startsAt: cover.startsAt, endsAt: cover.endsAt })]);
  expect(stored.escalationPolicies).toEqual([expect.objectContaining({
    id: policyId, name: 'Database escalation', monitorIds: [monitorId], steps: [expect.objectContaining({ targetType: 'schedule', targetId: scheduleId })],
  })]);

  // Removing the cover: the rotation applies again.
  await rota.getByRole('button', { name: /^Remove the cover by Grace Colleague/ }).click();
  await rota.getByRole('group', { name: /^Remove the cover by Grace Colleague/ }).getByText('Remove the cover by Grace Colleague? The rotation applies again.').waitFor();
  await noAxe(p, 'cover-remove-question');
  await rota.getByRole('button', { name: 'Yes, remove' }).click();
  await rota.getByText(/^Ada Owner until/).waitFor();
  expect((await onCall()).overrides).toEqual([]);

  // Deleting, after the confirmation.
  await policies.getByRole('button', { name: 'Delete Database escalation' }).click();
  await policies.getByRole('group', { name: 'Delete Database escalation' }).getByRole('button', { name: 'Yes, delete' }).click();
  await policies.getByText('No escalation policy yet.').waitFor();
  expect((await onCall()).escalationPolicies).toEqual([]);
  await rota.getByRole('button', { name: 'Delete Primary rota' }).click();
  await rota.getByRole('group', { name: 'Delete Primary rota' }).getByRole('button', { name: 'Yes, delete' }).click();
  await p.getByText('No on-call schedule yet.').waitFor();
  expect((await onCall()).schedules).toEqual([]);
  await noAxe(p, 'on-call-edit-emptied');
}, 180_000);

describe('with a schedule and a policy', () => {
  beforeAll(async () => {
    const s = ok('createSchedule', await api.post('/on-call/schedules', {
      name: 'Weekly', timezone: 'Europe/Paris', shiftLengthHours: 168, handoffTime: '10:00', participantIds: [org.userId, grace.userId],
    }), 201);
    ok('createOverride', await api.post('/on-call/overrides', {
      scheduleId: s.id, userId: grace.userId, startsAt: new Date(Date.now() + 86_400_000).toISOString(), endsAt: new Date(Date.now() + 2 * 86_400_000).toISOString(),
    }), 201);
    ok('createEscalationPolicy', await api.post('/on-call/escalation-policies', {
      name: 'Everything', repeat: 1, monitorIds: [monitorId],
      steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: s.id }, { afterMinutes: 10, targetType: 'user', targetId: grace.userId }],
    }), 201);
  });

  test('light, dark and 375 px: the page and both forms pass axe and fit', async () => {
    for (const [colorScheme, width, suffix] of [['light', 1280, 'light'], ['dark', 1280, 'dark'], ['light', 375, 'phone']] as const) {
      const p = await signedIn(ownerEmail, { colorScheme, width });
      for (const [path, heading, name] of [
        ['/on-call', 'On-call', 'on-call-manage'], ['/on-call/schedules/new', 'New schedule', 'on-call-schedule-new'],
        ['/on-call/policies/new', 'New escalation policy', 'on-call-policy-new'],
      ] as const) {
        await p.goto(`${server.url}${path}`);
        await p.getByRole('heading', { name: heading, exact: true }).waitFor();
        if (path === '/on-call') {
          await p.getByRole('region', { name: 'Weekly' }).getByText(/until/).first().waitFor();
          await p.getByRole('button', { name: 'Add a cover for Weekly' }).click();
        } else await p.getByRole('button', { name: /^Create the/ }).waitFor();
        await noAxe(p, `${name}-${suffix}`);
        if (width === 375) expect({ path, wider: await wider(p) }).toEqual({ path, wider: [] });
        await shot(p, `${name}-${suffix}`);
      }
    }
  }, 180_000);

  test('a viewer sees who is on call and no control that writes', async () => {
    const viewer = await server.member(org.organizationId, 'viewer');
    const p = await signedIn(await person(viewer.userId, 'Vera Viewer'));
    await p.goto(`${server.url}/on-call`);
    await p.getByRole('region', { name: 'Weekly' }).getByText(/until/).first().waitFor();
    await p.getByRole('region', { name: 'Escalation policies' }).getByText(/Everything/).waitFor();
    const main = p.getByRole('main');
    expect(await main.getByRole('button').count()).toBe(0);
    expect(await main.getByRole('link', { name: /New|Edit/ }).count()).toBe(0);
    await noAxe(p, 'on-call-viewer');
    await p.goto(`${server.url}/on-call/schedules/new`);
    await p.getByText('Your role cannot change on-call schedules.').waitFor();
  }, 60_000);

  test('a member confined to a workspace: its schedules edited in place; a policy edited where the server allows, its 403 in its words', async () => {
    const confined = await server.member(org.organizationId, 'member', [org.workspaceId]);
    // A policy also paging a channel of another workspace: the member sees one of its two steps.
    const teamB = ok('createWorkspace', await api.post('/workspaces', { name: 'Team B' }), 201).id;
    const hook = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'Team B hook', target: 'https://hooks.example.test/b', workspaceId: teamB }), 201);
    const mixed = ok('createEscalationPolicy', await api.post('/on-call/escalation-policies', {
      name: 'Mixed', repeat: 0, monitorIds: [monitorId],
      steps: [{ afterMinutes: 0, targetType: 'user', targetId: grace.userId }, { afterMinutes: 5, targetType: 'channel', targetId: hook.id }],
    }), 201);
    const p = await signedIn(await person(confined.userId, 'Carl Confined'), { statuses: [403] });
    await p.goto(`${server.url}/on-call/schedules/new`);
    await p.getByRole('heading', { name: 'New schedule' }).waitFor();
    const forOptions = await p.getByLabel('For').locator('option').allTextContents();
    expect(forOptions).not.toContain('The whole organisation');
    await p.getByLabel('Name', { exact: true }).fill('Team rota');
    await p.getByLabel('Person to add').selectOption(confined.userId);
    await p.getByRole('button', { name: 'Add to the rotation' }).click();
    await p.getByRole('button', { name: 'Create the schedule' }).click();
    const team = p.getByRole('region', { name: 'Team rota' });
    await team.getByText(/^Carl Confined until/).waitFor();
    expect(await team.getByRole('button', { name: 'Delete Team rota' }).count()).toBe(1);
    // The organisation-wide schedule is not theirs to change: no control the server would refuse.
    expect(await p.getByRole('region', { name: 'Weekly' }).getByRole('button').count()).toBe(0);
    expect(await p.getByRole('region', { name: 'Weekly' }).getByRole('link', { name: 'Edit Weekly' }).count()).toBe(0);
    const made = (await onCall()).schedules.find((s: { name: string }) => s.name === 'Team rota');
    expect(made).toEqual(expect.objectContaining({ workspaceId: org.workspaceId, participants: [expect.objectContaining({ userId: confined.userId })] }));
    await noAxe(p, 'on-call-confined');

    // Their workspace's schedule: edited in place.
    await team.getByRole('link', { name: 'Edit Team rota' }).click();
    await p.getByRole('heading', { name: 'Edit schedule' }).waitFor();
    await p.getByLabel('Name', { exact: true }).fill('Team rota B');
    await p.getByRole('button', { name: 'Save the schedule' }).click();
    await p.getByRole('region', { name: 'Team rota B' }).getByText(/^Carl Confined until/).waitFor();
    expect((await onCall()).schedules.find((s: { id: string }) => s.id === made.id)).toEqual(expect.objectContaining({ name: 'Team rota B', workspaceId: org.workspaceId }));

    // The policy: renamed (only the name is sent), then its steps refused in the server's words at the steps.
    await p.getByRole('link', { name: 'Edit Mixed' }).click();
    await p.getByRole('heading', { name: 'Edit escalation policy' }).waitFor();
    expect(await p.getByLabel('Step 2: who').count()).toBe(0);
    await p.getByText(/^You see the steps whose target is within your workspaces/).waitFor();
    await p.getByLabel('Name', { exact: true }).fill('Mixed paging');
    await p.getByRole('button', { name: 'Save the policy' }).click();
    await p.getByRole('region', { name: 'Escalation policies' }).getByText(/Mixed paging/).waitFor();
    await p.getByRole('link', { name: 'Edit Mixed paging' }).click();
    await p.getByLabel('Step 1: after (minutes)').fill('2');
    await p.getByRole('button', { name: 'Save the policy' }).click();
    await p.getByText(/^Confined to workspaces, this caller holds notification_channel:manage only within them and cannot replace the steps/).waitFor();
    await noAxe(p, 'policy-edit-confined-refused');
    await shot(p, 'on-call-policy-confined-refused');
    const kept = (await onCall()).escalationPolicies.find((x: { id: string }) => x.id === mixed.id);
    expect(kept).toEqual(expect.objectContaining({
      name: 'Mixed paging', steps: [expect.objectContaining({ afterMinutes: 0, targetId: grace.userId }), expect.objectContaining({ afterMinutes: 5, targetId: hook.id })],
    }));
  }, 90_000);
});
