import { randomBytes } from 'node:crypto';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { channelKinds } from '../src/alerting/channels';
import type { AlertErrorIssue, AlertEvent, AlertMessage, ChannelKind, DeliveryContext } from '../src/alerting/channels/channel';
import { alertText } from '../src/alerting/channels/text';
import { verifyWebhookSignature } from '../src/alerting/channels/webhook';
import { GetErrorIssueResponseSchema, SetErrorProjectChannelsRequestSchema, SetErrorProjectChannelsResponseSchema } from '../gen/proto/vigil/v1/errors_pb';
import { groupBatch } from '../src/errors/grouper';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';

// A new error issue and a regression page the channels attached to the
// project — once, however many events arrive — and are entries of the
// issue's activity; more events of an open issue, events of an ignored
// issue and events from a release older than the resolution page nobody.
// The attach operation is refused like a monitor's: viewers, other
// organisations' channels, other workspaces' projects.

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let api: ApiClient;
let receiver: HttpReceiver;

type Project = { id: string; ref: number; publicKey: string; name: string };

async function project(name: string, client = api, workspaceId = org.workspaceId): Promise<Project> {
  return ok('createErrorProject', await client.post('/errors/projects', { name, workspaceId }), 201);
}

async function send(p: Project, events: Record<string, unknown>[]) {
  const body = ['{}', ...events.flatMap((e) => ['{"type":"event"}', JSON.stringify({ platform: 'node', ...e })])].join('\n');
  const res = await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body });
  expect(res.status).toBe(200);
}

const frame = (fn: string, line: number) => ({ filename: '/app/src/cart.js', module: 'cart', function: fn, lineno: line, colno: 3, in_app: true });
const thrown = (value: string, extra: Record<string, unknown> = {}) => ({
  exception: { values: [{ type: 'TypeError', value, stacktrace: { frames: [frame('handler', 10), frame('addItem', 42)] } }] }, ...extra,
});

async function issues(projectId: string) {
  return ok('listErrorIssues', await api.get(`/errors/issues?project=${projectId}&status=all`)) as any[];
}
async function grouped(projectId: string, events: number) {
  await until(`${events} events grouped`, async () => (await issues(projectId)).reduce((a, i) => a + i.timesSeen, 0) >= events, 20_000);
  return issues(projectId);
}
/** Deliveries queued for an issue (written in grouping's transaction, so this is exact once the events are grouped). */
async function deliveriesOf(issueId: string) {
  return server.db.selectFrom('deliveries').select(['event', 'channel_id', 'status', 'incident_id']).where('error_issue_id', '=', issueId).orderBy('created_at').execute();
}
async function webhook(name: string, client = api, workspaceId: string | null = org.workspaceId) {
  return ok('createChannel', await client.post('/channels', { kind: 'webhook', name, target: `${receiver.url}/${name}`, workspaceId }), 201) as { id: string; secret: string };
}
const hits = (name: string) => receiver.requests.filter((r) => r.path === `/${name}`);

beforeAll(async () => {
  receiver = await startHttpReceiver();
  server = await startTestServer({
    WORKER: 'true', MASTER_KEY: randomBytes(32).toString('base64'), RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
    PAGERDUTY_EVENTS_URL: `${receiver.url}/pagerduty`,
  });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

test('a new issue pages once; more events do not; a regression pages once, an older release and an ignored issue do not; detached pages nobody', async () => {
  const p = await project('Shop');
  const hook = await webhook('shop');
  const pd = ok('createChannel', await api.post('/channels', { kind: 'pagerduty', name: 'On call', target: 'a'.repeat(32), workspaceId: null }), 201);
  expect(ok('listErrorProjectChannels', await api.get(`/errors/projects/${p.id}/channels`))).toEqual([]);
  const set = ok('setErrorProjectChannels', await api.put(`/errors/projects/${p.id}/channels`, { channelIds: [hook.id, pd.id, hook.id] }));
  expect(set.map((c: any) => c.name)).toEqual(['On call', 'shop']);
  expect(ok('listErrorProjectChannels', await api.get(`/errors/projects/${p.id}/channels`))).toEqual(set);

  // A burst of a thousand events of one new error: one issue, one page per channel.
  for (let i = 0; i < 10; i++) {
    await send(p, Array.from({ length: 100 }, (_, j) => thrown(`cannot read properties of undefined (item ${i * 100 + j})`, { release: 'shop@1.1.0', environment: 'production' })));
  }
  const [issue] = await grouped(p.id, 1000);
  expect((await deliveriesOf(issue.id)).map((d) => d.event)).toEqual(['error_issue.created', 'error_issue.created']);
  const [created] = await until('the page', async () => hits('shop').length >= 1 && hits('pagerduty').length >= 1 && hits('shop'));
  expect(created.headers['vigil-event']).toBe('error_issue.created');
  expect(verifyWebhookSignature(hook.secret, created.body, created.headers['vigil-signature'])).toBe(true);
  expect(created.json).toMatchObject({
    event: 'error_issue.created', incident: null,
    text: expect.stringMatching(/^🐞 New error in Shop: TypeError: cannot read properties of undefined/),
    errorIssue: {
      id: issue.id, projectId: p.id, projectName: 'Shop', title: expect.stringMatching(/^TypeError: cannot read properties of undefined/), culprit: 'addItem (cart)', level: 'error',
      release: 'shop@1.1.0', environment: 'production', url: `${server.url}/api/v1/errors/issues/${issue.id}`,
    },
  });
  expect(created.json.errorIssue.timesSeen).toBeGreaterThanOrEqual(1);
  const [trigger] = hits('pagerduty');
  expect(trigger.json).toMatchObject({ event_action: 'trigger', dedup_key: issue.id, payload: { source: 'Shop', severity: 'error', component: p.id } });
  // The delivery is recorded, and leaves nothing on any incident's timeline.
  await until('the deliveries recorded', async () => (await deliveriesOf(issue.id)).every((d) => d.status === 'delivered'));
  expect((await deliveriesOf(issue.id)).every((d) => d.incident_id === null)).toBe(true);

  // More events of the open issue, from a newer release: nobody is paged.
  await send(p, [thrown('again', { release: 'shop@1.2.0' }), thrown('and again', { release: 'shop@1.2.0' })]);
  await grouped(p.id, 1002);
  expect(await deliveriesOf(issue.id)).toHaveLength(2);

  // Resolved in shop@1.2.0: an event of shop@1.1.0 leaves it resolved and pages nobody; shop@1.3.0 is a regression, paged once.
  expect(ok('updateErrorIssue', await api.patch(`/errors/issues/${issue.id}`, { status: 'resolved' }))).toMatchObject({ status: 'resolved', resolvedInRelease: 'shop@1.2.0' });
  await send(p, [thrown('late', { release: 'shop@1.1.0' })]);
  await grouped(p.id, 1003);
  expect((await issues(p.id))[0].status).toBe('resolved');
  expect(await deliveriesOf(issue.id)).toHaveLength(2);
  await send(p, [thrown('back', { release: 'shop@1.3.0', environment: 'staging' }), thrown('back again', { release: 'shop@1.3.0' })]);
  await grouped(p.id, 1005);
  expect((await issues(p.id))[0].status).toBe('unresolved');
  expect((await deliveriesOf(issue.id)).map((d) => d.event)).toEqual(['error_issue.created', 'error_issue.created', 'error_issue.regressed', 'error_issue.regressed']);
  const regressed = (await until('the regression page', async () => hits('shop').length >= 2 && hits('shop')))[1];
  expect(regressed.json).toMatchObject({
    event: 'error_issue.regressed', text: expect.stringMatching(/^♻️ Regression in Shop: TypeError: .* \(release shop@1\.3\.0\)$/),
    errorIssue: { id: issue.id, release: 'shop@1.3.0', environment: 'staging' },
  });
  await until('the second trigger', async () => hits('pagerduty').length >= 2);
  expect(hits('pagerduty')[1].json).toMatchObject({ event_action: 'trigger', dedup_key: issue.id });

  // Ignored: events page nobody (and do not reopen it).
  ok('updateErrorIssue', await api.patch(`/errors/issues/${issue.id}`, { status: 'ignored' }));
  await send(p, [thrown('ignored', { release: 'shop@1.4.0' })]);
  await grouped(p.id, 1006);
  expect((await issues(p.id))[0].status).toBe('ignored');
  expect(await deliveriesOf(issue.id)).toHaveLength(4);

  // Reopened and resolved again, then detached: a regression is on the timeline but pages nobody.
  ok('updateErrorIssue', await api.patch(`/errors/issues/${issue.id}`, { status: 'unresolved' }));
  ok('updateErrorIssue', await api.patch(`/errors/issues/${issue.id}`, { status: 'resolved' }));
  expect(ok('setErrorProjectChannels', await api.put(`/errors/projects/${p.id}/channels`, { channelIds: [] }))).toEqual([]);
  await send(p, [thrown('unheard', { release: 'shop@1.5.0' })]);
  await grouped(p.id, 1007);
  expect((await issues(p.id))[0].status).toBe('unresolved');
  expect(await deliveriesOf(issue.id)).toHaveLength(4);
  expect(hits('shop')).toHaveLength(2);

  // The activity: oldest first, events' releases, people's changes with who made them.
  const detail = ok('getErrorIssue', await api.get(`/errors/issues/${issue.id}`));
  const me = { type: 'api_key', id: expect.any(String), name: expect.any(String) };
  expect(detail.activity).toEqual([
    { kind: 'first_seen', at: expect.any(String), release: 'shop@1.1.0', actor: null },
    { kind: 'resolved', at: expect.any(String), release: 'shop@1.2.0', actor: me },
    { kind: 'regressed', at: expect.any(String), release: 'shop@1.3.0', actor: null },
    { kind: 'ignored', at: expect.any(String), release: null, actor: me },
    { kind: 'unresolved', at: expect.any(String), release: null, actor: me },
    { kind: 'resolved', at: expect.any(String), release: 'shop@1.4.0', actor: me },
    { kind: 'regressed', at: expect.any(String), release: 'shop@1.5.0', actor: null },
  ]);
  const times = detail.activity.map((a: { at: string }) => Date.parse(a.at));
  expect([...times].sort((a, b) => a - b)).toEqual(times);
  expect(detail.activity[0].at).toBe(issue.firstSeenAt);
  // Reopening what is open already adds nothing.
  ok('updateErrorIssue', await api.patch(`/errors/issues/${issue.id}`, { status: 'unresolved' }));
  expect(ok('getErrorIssue', await api.get(`/errors/issues/${issue.id}`)).activity).toHaveLength(7);
});

test('groupers working side by side create a new issue once: one first_seen, one page', async () => {
  const p = await project('Crowded');
  const hook = await webhook('crowded');
  ok('setErrorProjectChannels', await api.put(`/errors/projects/${p.id}/channels`, { channelIds: [hook.id] }));
  for (let i = 0; i < 3; i++) await send(p, Array.from({ length: 1000 }, (_, j) => thrown(`crowded ${i}-${j}`)));
  // The worker's grouper and two more take disjoint batches of the same new fingerprint at once.
  await Promise.all([groupBatch(server.db), groupBatch(server.db), groupBatch(server.db)]);
  const [issue] = await grouped(p.id, 3000);
  expect((await deliveriesOf(issue.id)).map((d) => d.event)).toEqual(['error_issue.created']);
  expect(ok('getErrorIssue', await api.get(`/errors/issues/${issue.id}`)).activity.map((a: any) => a.kind)).toEqual(['first_seen']);
  await until('the page', async () => hits('crowded').length === 1);
});

test('only enabled, confirmed channels are paged; a project without channels pages nobody', async () => {
  const quiet = await project('Quiet');
  const p = await project('Picky');
  const live = await webhook('picky-live');
  const off = await webhook('picky-off');
  ok('updateChannel', await api.patch(`/channels/${off.id}`, { enabled: false }));
  const mail = ok('createChannel', await api.post('/channels', { kind: 'email', name: 'Unconfirmed', target: 'oncall@example.test', workspaceId: org.workspaceId }), 201);
  ok('setErrorProjectChannels', await api.put(`/errors/projects/${p.id}/channels`, { channelIds: [live.id, off.id, mail.id] }));
  await send(quiet, [thrown('nobody hears')]);
  await send(p, [thrown('somebody hears')]);
  const [q] = await grouped(quiet.id, 1);
  const [i] = await grouped(p.id, 1);
  expect(await deliveriesOf(q.id)).toEqual([]);
  expect((await deliveriesOf(i.id)).map((d) => d.channel_id)).toEqual([live.id]);
  await until('the page', async () => hits('picky-live').length === 1);
  expect(ok('getErrorIssue', await api.get(`/errors/issues/${q.id}`)).activity.map((a: any) => a.kind)).toEqual(['first_seen']);
});

test('the channels of a project: viewers read but cannot set, other organisations and workspaces are refused', async () => {
  const p = await project('Guarded');
  const orgWide = await webhook('guarded-wide', api, null);
  const viewer = server.api((await server.member(org.organizationId, 'viewer')).apiKey);
  ok('setErrorProjectChannels', await api.put(`/errors/projects/${p.id}/channels`, { channelIds: [orgWide.id] }));
  expect(ok('listErrorProjectChannels', await viewer.get(`/errors/projects/${p.id}/channels`)).map((c: any) => c.id)).toEqual([orgWide.id]);
  const denied = await viewer.put(`/errors/projects/${p.id}/channels`, { channelIds: [] });
  expect(denied.status).toBe(403);
  expect(denied.body.error).toContain('monitor:update');

  // Another organisation: its channel is unknown here, our project does not exist there.
  const other = await server.org({ plan: 'business' });
  const otherApi = server.api(other.apiKey);
  const foreign = ok('createChannel', await otherApi.post('/channels', { kind: 'webhook', name: 'theirs', target: `${receiver.url}/theirs`, workspaceId: null }), 201);
  const refused = await api.put(`/errors/projects/${p.id}/channels`, { channelIds: [orgWide.id, foreign.id] });
  expect(refused.status).toBe(400);
  expect(refused.body).toMatchObject({ code: 'unknown_channel', details: { field: 'channelIds.1' } });
  for (const res of [await otherApi.get(`/errors/projects/${p.id}/channels`), await otherApi.put(`/errors/projects/${p.id}/channels`, { channelIds: [] })]) {
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  }
  expect((await api.get('/errors/projects/prj_nope/channels')).status).toBe(404);
  expect((await api.put(`/errors/projects/${p.id}/channels`, {})).status).toBe(400);
  // A refused set changed nothing.
  expect(ok('listErrorProjectChannels', await api.get(`/errors/projects/${p.id}/channels`)).map((c: any) => c.id)).toEqual([orgWide.id]);

  // A key confined to another workspace: our project does not exist for it; its own project takes organisation-wide
  // channels and its workspace's, not another workspace's.
  const ws2 = ok('createWorkspace', await api.post('/workspaces', { name: 'Client B' }), 201).id;
  const confined = server.api((await server.member(org.organizationId, 'member', [ws2])).apiKey);
  for (const res of [await confined.get(`/errors/projects/${p.id}/channels`), await confined.put(`/errors/projects/${p.id}/channels`, { channelIds: [] })]) {
    expect(res.status).toBe(404);
  }
  const own = await project('Client B app', confined, ws2);
  const ownHook = await webhook('client-b', confined, ws2);
  const inDefault = await webhook('default-ws');
  const bad = await confined.put(`/errors/projects/${own.id}/channels`, { channelIds: [ownHook.id, inDefault.id] });
  expect(bad.status).toBe(400);
  expect(bad.body.details.field).toBe('channelIds.1');
  const mine = ok('setErrorProjectChannels', await confined.put(`/errors/projects/${own.id}/channels`, { channelIds: [ownHook.id, orgWide.id] }));
  expect(mine.map((c: any) => c.id).sort()).toEqual([ownHook.id, orgWide.id].sort());
  // Nor may the default workspace's project take the confined workspace's channel.
  const cross = await api.put(`/errors/projects/${p.id}/channels`, { channelIds: [ownHook.id] });
  expect(cross.status).toBe(400);

  // Each change is audited with the set before and after.
  const entries = await server.db.selectFrom('audit_log').select(['action', 'changes']).where('resource_id', '=', p.id).where('action', '=', 'error_project.channels_set').execute();
  expect(entries).toHaveLength(1);
  expect(entries[0].changes).toEqual({ channelIds: { from: [], to: [orgWide.id] } });

  // Deleting the project drops its links; deleting a channel drops it from every project.
  ok('deleteChannel', await confined.delete(`/channels/${ownHook.id}`));
  expect(ok('listErrorProjectChannels', await confined.get(`/errors/projects/${own.id}/channels`)).map((c: any) => c.id)).toEqual([orgWide.id]);
  ok('deleteErrorProject', await confined.delete(`/errors/projects/${own.id}`));
  expect(await server.db.selectFrom('error_project_channels').select('channel_id').where('project_id', '=', own.id).execute()).toEqual([]);
});

test('protobuf: a project\'s channels set, and an issue\'s activity read', async () => {
  const PB = 'application/x-protobuf';
  const p = await project('Wire');
  const hook = await webhook('wire');
  const body = toBinary(SetErrorProjectChannelsRequestSchema, create(SetErrorProjectChannelsRequestSchema, { id: p.id, channelIds: { values: [hook.id] } }));
  const put = await fetch(`${server.url}/api/v1/errors/projects/${p.id}/channels`, {
    method: 'PUT', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': PB, accept: PB }, body,
  });
  expect(put.status).toBe(200);
  expect(fromBinary(SetErrorProjectChannelsResponseSchema, new Uint8Array(await put.arrayBuffer())).data.map((c) => c.id)).toEqual([hook.id]);
  await send(p, [thrown('on the wire', { release: 'wire@1.0.0' })]);
  const [i] = await grouped(p.id, 1);
  ok('updateErrorIssue', await api.patch(`/errors/issues/${i.id}`, { status: 'resolved' }));
  const res = await fetch(`${server.url}/api/v1/errors/issues/${i.id}`, { headers: { authorization: `Bearer ${org.apiKey}`, accept: PB } });
  expect(res.status).toBe(200);
  const activity = fromBinary(GetErrorIssueResponseSchema, new Uint8Array(await res.arrayBuffer())).data!.activity;
  expect(activity.map((a) => [a.kind, a.release, a.actor?.type])).toEqual([['first_seen', 'wire@1.0.0', undefined], ['resolved', 'wire@1.0.0', 'api_key']]);
  expect(activity[0].at).toBeDefined();
});

describe('every channel kind words an error alert', () => {
  let rx: HttpReceiver;
  let smtp: SmtpReceiver;
  const issue: AlertErrorIssue = {
    id: 'iss_1', projectId: 'prj_1', projectName: 'Shop', title: 'TypeError: x is undefined', culprit: 'addItem (cart)', level: 'fatal',
    release: 'shop@1.3.0', environment: 'production', timesSeen: 12, url: 'http://vigil.test/api/v1/errors/issues/iss_1',
  };
  const message = (event: AlertEvent): AlertMessage => ({
    id: `dlv_${event}`, event, incident: null, errorIssue: issue, occurredAt: '2024-05-01T10:00:05.000Z', text: alertText(event, null, { errorIssue: issue }),
  });
  const ctx = (): DeliveryContext => ({
    net: { allowPrivate: true, extraCa: [] } as unknown as DeliveryContext['net'],
    providers: {
      smtpUrl: smtp.url, mailFrom: 'Vigil <vigil@example.com>', telegramApiUrl: `${rx.url}/telegram`, telegramBotToken: '123:abc',
      pagerdutyEventsUrl: `${rx.url}/v2/enqueue`, jsmApiUrl: `${rx.url}/jsm`, smsUrl: `${rx.url}/sms`, smsAccountSid: null, smsAuthToken: null, smsFrom: null,
    } as DeliveryContext['providers'],
    signal: AbortSignal.timeout(5000), baseUrl: 'http://vigil.test',
  });
  const deliver = (kind: ChannelKind, target: string, event: AlertEvent = 'error_issue.created') => channelKinds[kind].deliver(
    { id: `ch_${kind}`, name: kind, target: channelKinds[kind].parseTarget(target).target, secret: kind === 'webhook' ? 'whsec_x' : null, config: {} }, message(event), ctx());

  beforeAll(async () => { rx = await startHttpReceiver(); smtp = await startSmtpServer(); });
  afterAll(async () => { await rx.close(); await smtp.close(); });

  it('text', () => {
    expect(message('error_issue.created').text).toBe('🐞 New error in Shop: TypeError: x is undefined');
    expect(message('error_issue.regressed').text).toBe('♻️ Regression in Shop: TypeError: x is undefined (release shop@1.3.0)');
    expect(alertText('error_issue.regressed', null, { errorIssue: { ...issue, release: null } })).toBe('♻️ Regression in Shop: TypeError: x is undefined');
  });

  it('pagerduty triggers under the issue id, jsm creates under it', async () => {
    expect(await deliver('pagerduty', 'b'.repeat(32), 'error_issue.regressed')).toMatchObject({ delivered: true });
    expect(await deliver('jsm', 'genie-key')).toMatchObject({ delivered: true });
    const [pd, jsm] = await rx.waitFor(2);
    expect(pd.json).toMatchObject({
      event_action: 'trigger', dedup_key: 'iss_1', client: 'Vigil',
      payload: { summary: message('error_issue.regressed').text, source: 'Shop', severity: 'critical', component: 'prj_1', custom_details: { release: 'shop@1.3.0', timesSeen: 12 } },
    });
    expect(jsm.path).toBe('/jsm');
    expect(jsm.json).toMatchObject({
      alias: 'iss_1', message: 'New error in Shop: TypeError: x is undefined', priority: 'P1', entity: 'Shop',
      details: { project: 'Shop', issueId: 'iss_1', release: 'shop@1.3.0', environment: 'production', timesSeen: '12' },
    });
  });

  it('webhook, slack, discord, teams, telegram carry the text and the issue; email its facts', async () => {
    const before = rx.requests.length;
    for (const [kind, target] of [['webhook', `${rx.url}/hook`], ['slack', `${rx.url}/slack`], ['discord', `${rx.url}/discord`], ['teams', `${rx.url}/teams`], ['telegram', '@shopchat']] as const) {
      expect({ kind, result: await deliver(kind, target) }).toMatchObject({ kind, result: { delivered: true } });
    }
    const [hook, slack, discord, teams, telegram] = (await rx.waitFor(before + 5)).slice(before);
    expect(hook.json).toMatchObject({ event: 'error_issue.created', incident: null, errorIssue: issue });
    expect(slack.json.text).toBe('🐞 New error in Shop: TypeError: x is undefined');
    expect(discord.json.embeds[0]).toMatchObject({ title: 'New error in Shop: TypeError: x is undefined', description: expect.stringContaining('**Release:** shop@1.3.0') });
    const card = JSON.stringify(teams.json);
    expect(card).toContain('New error in Shop: TypeError: x is undefined');
    expect(card).toContain('"title":"Culprit","value":"addItem (cart)"');
    expect(telegram.json.text).toBe('🐞 New error in Shop: TypeError: x is undefined');
    expect(await deliver('email', 'dev@example.test')).toMatchObject({ delivered: true });
    const [mail] = await smtp.waitFor(1);
    expect(mail.subject).toBe('[Vigil] New error in Shop: TypeError: x is undefined');
    expect(mail.text).toContain('Environment: production');
    expect(mail.text).toContain('Link: http://vigil.test/api/v1/errors/issues/iss_1');
  });
});
