/**
 * Notification channels: GET/POST /channels, PATCH/DELETE /channels/{id},
 * POST /channels/{id}/test and /confirmation, the confirmation link
 * /confirm/<token>, and GET/PUT /monitors/{id}/channels — black-box over HTTP
 * against the spec, the contract's schemas and local provider fakes.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok, until } from './support/expect';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';
import { verifyWebhookSignature } from '../src/alerting/channels/webhook';
import { ListChannelsResponseSchema, SetMonitorChannelsRequestSchema, SetMonitorChannelsResponseSchema } from '../gen/proto/vigil/v1/channels_pb';

let srv: TestServer;
let hook: HttpReceiver;
let providers: HttpReceiver;
let smtp: SmtpReceiver;

const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/slacksecretpath123';
const PD_KEY = 'pdkey0123456789abcdef0123456789z';

beforeAll(async () => {
  hook = await startHttpReceiver();
  providers = await startHttpReceiver();
  smtp = await startSmtpServer();
  srv = await startTestServer({
    RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000',
    SMTP_URL: smtp.url, MAIL_FROM: 'Vigil <alerts@vigil.test>',
    TELEGRAM_API_URL: providers.url, TELEGRAM_BOT_TOKEN: '123456:test-bot-token',
    PAGERDUTY_EVENTS_URL: `${providers.url}/v2/enqueue`, JSM_API_URL: `${providers.url}/jsm/alerts`,
  });
});
afterAll(async () => {
  await srv?.close();
  await hook?.close();
  await providers?.close();
  await smtp?.close();
});

/** A fresh organisation and its owner's client. */
async function newOrg(plan = 'business') {
  const o = await srv.org({ plan });
  return { ...o, api: srv.api(o.apiKey) };
}

async function createChannel(api: ApiClient, body: Record<string, unknown>) {
  return ok('createChannel', await api.post('/channels', body), 201);
}

async function listChannels(api: ApiClient) {
  return ok('listChannels', await api.get('/channels')) as any[];
}

async function auditText(api: ApiClient): Promise<{ entries: any[]; text: string }> {
  const entries = ok('listAuditEntries', await api.get('/audit?limit=200'));
  return { entries, text: JSON.stringify(entries) };
}

async function newMonitor(api: ApiClient, workspaceId: string, name = 'Site') {
  return ok('createMonitor', await api.post('/monitors', { name, kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://a.example' }) }), 201).id as string;
}

/** The confirmation tokens in the mails sent to `address`, oldest first. */
function confirmationLinks(address: string): string[] {
  return smtp.messages
    .filter((m) => m.to.includes(address))
    .map((m) => /\/confirm\/([A-Za-z0-9_-]+)/.exec(m.text)?.[0])
    .filter((l): l is string => Boolean(l));
}

/** Follows a link of the confirmation mail the way a browser (GET) or a form (POST) would. */
async function follow(link: string, method = 'GET') {
  const res = await fetch(`${srv.url}${link}`, { method });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

let emailSeq = 0;
const address = () => `person${++emailSeq}-${Date.now().toString(36)}@example.test`;

describe('POST /channels', () => {
  it('creates a webhook with its secret shown once, never in the list, the audit log or the database in clear', async () => {
    const o = await newOrg();
    const target = `${hook.url}/hooks/vigil?token=query-cred-123`;
    const ch = await createChannel(o.api, { kind: 'webhook', name: 'Ops hook', target, workspaceId: null });
    expect(ch).toMatchObject({ kind: 'webhook', name: 'Ops hook', workspaceId: null, enabled: true, confirmed: true, secretStored: true, config: '{}' });
    expect(ch.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // The query is where credentials live: masked in the display form.
    expect(ch.target).toBe(`${hook.url}/…`);
    expect(ch.owner).toMatchObject({ userId: o.userId });
    expect(JSON.parse(ch.config)).toEqual({});

    const list = await listChannels(o.api);
    expect(list).toHaveLength(1);
    expect(list[0]).toEqual({ ...ch, secret: undefined });
    expect('secret' in list[0]).toBe(false);
    const listText = JSON.stringify(list);
    expect(listText).not.toContain(ch.secret);
    expect(listText).not.toContain('query-cred-123');

    const { entries, text } = await auditText(o.api);
    const created = entries.find((e) => e.action === 'channel.created' && e.resourceId === ch.id);
    expect(created.changes).toMatchObject({ kind: { to: 'webhook' }, name: { to: 'Ops hook' }, target: { to: ch.target }, enabled: { to: true } });
    expect(text).not.toContain(ch.secret);
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain('query-cred-123');

    const row = await srv.db.selectFrom('notification_channels').selectAll().where('id', '=', ch.id).executeTakeFirstOrThrow();
    expect(row.target).toBe(ch.target);
    expect(row.secret_enc).toBeTruthy();
    expect(row.secret_enc).not.toContain(ch.secret);
    expect(row.target_enc).not.toContain('query-cred-123');
  });

  it('masks a target that is a credential by itself (slack URL, pagerduty key) and reports secretStored', async () => {
    const o = await newOrg();
    const slack = await createChannel(o.api, { kind: 'slack', name: 'Slack', target: SLACK_URL });
    expect(slack).toMatchObject({ target: 'https://hooks.slack.com/…', secretStored: true, secret: null, confirmed: true, workspaceId: null });
    const pd = await createChannel(o.api, { kind: 'pagerduty', name: 'PD', target: PD_KEY, workspaceId: o.workspaceId });
    expect(pd).toMatchObject({ secretStored: true, secret: null, workspaceId: o.workspaceId });
    expect(pd.target).not.toContain(PD_KEY.slice(0, 20));
    expect(pd.target.endsWith(PD_KEY.slice(-4))).toBe(true);
    const tg = await createChannel(o.api, { kind: 'telegram', name: 'TG', target: '-1001234567890' });
    expect(tg).toMatchObject({ target: '-1001234567890', secretStored: false, secret: null });

    const list = await listChannels(o.api);
    expect(list.map((c) => c.name)).toEqual(['PD', 'Slack', 'TG']); // by name
    const text = JSON.stringify(list) + (await auditText(o.api)).text;
    expect(text).not.toContain('slacksecretpath123');
    expect(text).not.toContain(PD_KEY);
  });

  it.each([
    ['sms', '+15555550100'], ['whatsapp', '+15555550100'], ['satellite', 'x'], ['push', 'x'], ['gopher', 'x'],
  ])('kind %s cannot be created (400 naming kind)', async (kind, target) => {
    const o = await newOrg();
    const res = await o.api.post('/channels', { kind, name: 'n', target });
    expect(res.status).toBe(400);
    expect(res.body.details.field).toBe('kind');
    expect(await listChannels(o.api)).toEqual([]);
  });

  it.each([
    ['email', 'not-an-address'], ['webhook', 'ftp://files.example/x'], ['slack', 'not a url'], ['pagerduty', 'short'],
  ])('a %s target in the wrong format is 400 naming target', async (kind, target) => {
    const o = await newOrg();
    const res = await o.api.post('/channels', { kind, name: 'n', target });
    expect(res.status).toBe(400);
    expect(res.body.details.field).toBe('target');
  });

  it('refuses a missing name or target and an unknown workspace (404)', async () => {
    const o = await newOrg();
    for (const body of [{ kind: 'email', target: 'a@example.test' }, { kind: 'email', name: 'x' }]) {
      const res = await o.api.post('/channels', body);
      expect(res.status).toBe(400);
    }
    const other = await newOrg();
    const res = await o.api.post('/channels', { kind: 'telegram', name: 'x', target: '@channelx', workspaceId: other.workspaceId });
    expect(res.status).toBe(404);
    expect(res.body.details.field).toBe('workspaceId');
  });
});

describe('email channels and the confirmation link', () => {
  it('is created unconfirmed with one message; the link confirms it once; the setup checklist follows', async () => {
    const o = await newOrg();
    const to = address();
    const before = smtp.messages.length;
    expect(ok('getSetup', await o.api.get('/setup')).hasConfirmedChannel).toBe(false);

    const ch = await createChannel(o.api, { kind: 'email', name: 'On-call mail', target: to });
    expect(ch).toMatchObject({ kind: 'email', target: to, confirmed: false, enabled: true, secret: null, secretStored: false });
    await smtp.waitFor(before + 1);
    const links = confirmationLinks(to);
    expect(links).toHaveLength(1);
    expect(links[0].startsWith('/confirm/')).toBe(true);
    // Only a hash of the token is stored.
    const row = await srv.db.selectFrom('notification_channels').select(['confirmation_token_hash', 'confirmation_sent_at']).where('id', '=', ch.id).executeTakeFirstOrThrow();
    expect(row.confirmation_token_hash).toBeInstanceOf(Buffer);
    expect(row.confirmation_token_hash!.toString('utf8')).not.toContain(links[0].slice('/confirm/'.length));
    expect(row.confirmation_sent_at).not.toBeNull();

    // Nothing else is sent until the recipient agrees: a test is refused.
    const test = await o.api.post(`/channels/${ch.id}/test`);
    expect(test.status).toBe(409);
    expect(test.body.code).toBe('channel_not_confirmed');
    expect(ok('getSetup', await o.api.get('/setup')).hasConfirmedChannel).toBe(false);

    // A HEAD (link checker) confirms nothing.
    expect((await follow(links[0], 'HEAD')).status).toBe(200);
    expect((await listChannels(o.api)).find((c) => c.id === ch.id).confirmed).toBe(false);

    const page = await follow(links[0]);
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.text).toContain(`Alerts to ${to} confirmed`);
    expect(page.text).not.toMatch(/<script/i);

    expect((await listChannels(o.api)).find((c) => c.id === ch.id).confirmed).toBe(true);
    expect(ok('getSetup', await o.api.get('/setup')).hasConfirmedChannel).toBe(true);

    // A used link is 404 (small HTML page); confirming again sends nothing.
    const again = await follow(links[0]);
    expect(again.status).toBe(404);
    expect(again.type).toMatch(/^text\/html/);
    expect(again.text).not.toMatch(/<script/i);
    expect(ok('sendChannelConfirmation', await o.api.post(`/channels/${ch.id}/confirmation`))).toEqual({ sent: false });
    expect(confirmationLinks(to)).toHaveLength(1);

    // Confirmed: a test now goes out by mail.
    const n = smtp.messages.length;
    expect(ok('testChannel', await o.api.post(`/channels/${ch.id}/test`))).toEqual({ delivered: true, error: null });
    await smtp.waitFor(n + 1);
    expect(smtp.messages.slice(n).some((m) => m.to.includes(to))).toBe(true);
  });

  it('a disabled confirmed channel does not count as able to deliver', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'telegram', name: 'TG', target: '@opsteam' });
    expect(ok('getSetup', await o.api.get('/setup')).hasConfirmedChannel).toBe(true);
    ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { enabled: false }));
    expect(ok('getSetup', await o.api.get('/setup')).hasConfirmedChannel).toBe(false);
  });

  it('resending rotates the token: the old link stops working, the new one confirms (POST accepted too)', async () => {
    const o = await newOrg();
    const to = address();
    const ch = await createChannel(o.api, { kind: 'email', name: 'Mail', target: to });
    await until('confirmation mail 1', async () => confirmationLinks(to).length === 1);
    const [first] = confirmationLinks(to);

    expect(ok('sendChannelConfirmation', await o.api.post(`/channels/${ch.id}/confirmation`))).toEqual({ sent: true });
    await until('confirmation mail 2', async () => confirmationLinks(to).length === 2);
    const second = confirmationLinks(to)[1];
    expect(second).not.toBe(first);

    expect((await follow(first)).status).toBe(404);
    expect((await listChannels(o.api))[0].confirmed).toBe(false);
    const page = await follow(second, 'POST');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`Alerts to ${to} confirmed`);
    expect((await listChannels(o.api))[0].confirmed).toBe(true);

    const { entries, text } = await auditText(o.api);
    expect(entries.some((e) => e.action === 'channel.confirmation_sent' && e.resourceId === ch.id)).toBe(true);
    for (const link of [first, second]) expect(text).not.toContain(link.slice('/confirm/'.length));
  });

  it('a provider refusal is 502 confirmation_not_sent with the token rotated all the same', async () => {
    const o = await newOrg();
    const to = address();
    const ch = await createChannel(o.api, { kind: 'email', name: 'Mail', target: to });
    await until('confirmation mail 1', async () => confirmationLinks(to).length === 1);
    const [first] = confirmationLinks(to);

    smtp.rejectNext('550 5.1.1 mailbox unavailable');
    const res = await o.api.post(`/channels/${ch.id}/confirmation`);
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('confirmation_not_sent');
    expect(confirmationLinks(to)).toHaveLength(1);
    // Rotated: the link already delivered no longer works.
    expect((await follow(first)).status).toBe(404);

    expect(ok('sendChannelConfirmation', await o.api.post(`/channels/${ch.id}/confirmation`))).toEqual({ sent: true });
    await until('confirmation mail 2', async () => confirmationLinks(to).length === 2);
    expect((await follow(confirmationLinks(to)[1])).status).toBe(200);
  });

  it('a refused first message still creates the channel (201, unconfirmed); it can be resent', async () => {
    const o = await newOrg();
    const to = address();
    smtp.rejectNext('550 5.7.1 relay denied');
    const ch = await createChannel(o.api, { kind: 'email', name: 'Mail', target: to });
    expect(ch.confirmed).toBe(false);
    expect(confirmationLinks(to)).toHaveLength(0);
    expect(ok('sendChannelConfirmation', await o.api.post(`/channels/${ch.id}/confirmation`))).toEqual({ sent: true });
    await until('confirmation mail 1', async () => confirmationLinks(to).length === 1);
    expect((await follow(confirmationLinks(to)[0])).status).toBe(200);
  });

  it('kinds that never ask answer sent false; unknown and malformed tokens are 404', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'webhook', name: 'Hook', target: `${hook.url}/x` });
    expect(ok('sendChannelConfirmation', await o.api.post(`/channels/${ch.id}/confirmation`))).toEqual({ sent: false });
    for (const link of ['/confirm/cfm_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/confirm/%3Cscript%3E']) {
      const page = await follow(link);
      expect(page.status).toBe(404);
      expect(page.type).toMatch(/^text\/html/);
      expect(page.text).not.toMatch(/<script/i);
    }
  });
});

describe('POST /channels/{id}/test', () => {
  it('delivers a signed test alert to a webhook', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'webhook', name: 'Hook', target: `${hook.url}/signed` });
    hook.respondWith(200, 'ok');
    const n = hook.requests.length;
    expect(ok('testChannel', await o.api.post(`/channels/${ch.id}/test`))).toEqual({ delivered: true, error: null });
    await hook.waitFor(n + 1);
    const req = hook.requests[n];
    expect(req).toMatchObject({ method: 'POST', path: '/signed' });
    const sig = req.headers['vigil-signature'];
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(ch.secret, req.body, sig)).toBe(true);
    expect(req.json).toMatchObject({ event: 'test', incident: null });
    expect(typeof req.json.id).toBe('string');
    expect(req.body).not.toContain(ch.secret);
  });

  it('a failing receiver is still 200, with delivered false and the provider\'s words', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'webhook', name: 'Hook', target: `${hook.url}/failing` });
    hook.respondWith(500, JSON.stringify({ error: 'receiver is on fire' }));
    const n = hook.requests.length;
    const out = ok('testChannel', await o.api.post(`/channels/${ch.id}/test`));
    expect(out.delivered).toBe(false);
    expect(out.error).toContain('500');
    expect(out.error).toContain('receiver is on fire');
    await hook.waitFor(n + 1);
    hook.respondWith(200, 'ok');
  });

  it('tests a disabled channel all the same; telegram goes to the configured bot API', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'telegram', name: 'TG', target: '-1001234567890' });
    ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { enabled: false }));
    providers.respondWith(200, JSON.stringify({ ok: true, result: {} }));
    const n = providers.requests.length;
    expect(ok('testChannel', await o.api.post(`/channels/${ch.id}/test`))).toEqual({ delivered: true, error: null });
    await providers.waitFor(n + 1);
    expect(providers.requests[n].path).toBe('/bot123456:test-bot-token/sendMessage');
    expect(providers.requests[n].json).toMatchObject({ chat_id: '-1001234567890' });

    providers.respondWith(400, JSON.stringify({ ok: false, error_code: 400, description: 'Bad Request: chat not found' }));
    const out = ok('testChannel', await o.api.post(`/channels/${ch.id}/test`));
    expect(out.delivered).toBe(false);
    expect(out.error).toContain('chat not found');
    providers.respondWith(200, JSON.stringify({ ok: true, result: {} }));
  });
});

describe('PATCH and DELETE /channels/{id}', () => {
  it('switches a channel off and on, audited', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'telegram', name: 'TG', target: '@opsteam' });
    expect(ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { enabled: false }))).toEqual({ ok: true });
    expect((await listChannels(o.api))[0].enabled).toBe(false);
    expect(ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { enabled: true }))).toEqual({ ok: true });
    expect((await listChannels(o.api))[0].enabled).toBe(true);
    const { entries } = await auditText(o.api);
    const updates = entries.filter((e) => e.action === 'channel.updated' && e.resourceId === ch.id);
    expect(updates.map((e) => e.changes.enabled)).toEqual([{ from: false, to: true }, { from: true, to: false }]);
    const empty = await o.api.patch(`/channels/${ch.id}`, {});
    expect(empty.status).toBe(400);
  });

  it('deletes a channel: gone from the list and from monitors, deliveries keep their history', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'telegram', name: 'TG', target: '@opsteam' });
    const mon = await newMonitor(o.api, o.workspaceId);
    ok('setMonitorChannels', await o.api.put(`/monitors/${mon}/channels`, { channelIds: [ch.id] }));
    const deliveryId = `dlv_test_${Date.now()}`;
    await srv.db.insertInto('deliveries').values({ id: deliveryId, organization_id: o.organizationId, channel_id: ch.id, incident_id: null, event: 'test', last_error: null }).execute();

    expect(ok('deleteChannel', await o.api.delete(`/channels/${ch.id}`))).toEqual({ id: ch.id, deleted: true });
    expect(await listChannels(o.api)).toEqual([]);
    expect(ok('listMonitorChannels', await o.api.get(`/monitors/${mon}/channels`))).toEqual([]);
    const d = await srv.db.selectFrom('deliveries').selectAll().where('id', '=', deliveryId).executeTakeFirstOrThrow();
    expect(d.channel_id).toBeNull();
    expect((await o.api.delete(`/channels/${ch.id}`)).status).toBe(404);

    const { entries } = await auditText(o.api);
    const del = entries.find((e) => e.action === 'channel.deleted' && e.resourceId === ch.id);
    expect(del.changes).toMatchObject({ kind: { from: 'telegram' }, name: { from: 'TG' }, target: { from: '@opsteam' } });
  });
});

describe('permissions and tenancy', () => {
  it('a viewer reads but cannot write (403 naming the permission); the confirmation resolves the channel first', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'email', name: 'Mail', target: address() });
    const mon = await newMonitor(o.api, o.workspaceId);
    const viewer = srv.api((await srv.member(o.organizationId, 'viewer')).apiKey);
    expect((await listChannels(viewer)).map((c) => c.id)).toEqual([ch.id]);
    ok('listMonitorChannels', await viewer.get(`/monitors/${mon}/channels`));

    const refused: [string, Promise<any>, string][] = [
      ['create', viewer.post('/channels', { kind: 'telegram', name: 'x', target: '@xchannel' }), 'notification_channel:manage'],
      ['update', viewer.patch(`/channels/${ch.id}`, { enabled: false }), 'notification_channel:manage'],
      ['delete', viewer.delete(`/channels/${ch.id}`), 'notification_channel:manage'],
      ['test', viewer.post(`/channels/${ch.id}/test`), 'notification_channel:manage'],
      ['confirmation', viewer.post(`/channels/${ch.id}/confirmation`), 'notification_channel:manage'],
      ['set monitor channels', viewer.put(`/monitors/${mon}/channels`, { channelIds: [ch.id] }), 'monitor:update'],
    ];
    for (const [what, p, permission] of refused) {
      const res = await p;
      expect({ what, status: res.status, permission: res.body.vars?.permission }).toEqual({ what, status: 403, permission });
    }
    // Resolved before the permission check: an unknown channel is 404 even for the viewer.
    expect((await viewer.post('/channels/ch_nope/confirmation')).status).toBe(404);
    expect((await listChannels(o.api))[0]).toMatchObject({ enabled: true });
  });

  it('another organisation\'s channels and monitors do not exist (404, never listed)', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const ch = await createChannel(a.api, { kind: 'email', name: 'A mail', target: address() });
    const mon = await newMonitor(a.api, a.workspaceId);
    const monB = await newMonitor(b.api, b.workspaceId);
    expect(await listChannels(b.api)).toEqual([]);
    for (const res of [
      await b.api.patch(`/channels/${ch.id}`, { enabled: false }),
      await b.api.delete(`/channels/${ch.id}`),
      await b.api.post(`/channels/${ch.id}/test`),
      await b.api.post(`/channels/${ch.id}/confirmation`),
      await b.api.get(`/monitors/${mon}/channels`),
      await b.api.put(`/monitors/${mon}/channels`, { channelIds: [] }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const foreign = await b.api.put(`/monitors/${monB}/channels`, { channelIds: [ch.id] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.details.field).toBe('channelIds.0');
    expect((await listChannels(a.api))[0]).toMatchObject({ enabled: true });
  });

  it('a key confined to workspaces sees organisation-wide and its own channels, creates only in its workspaces', async () => {
    const o = await newOrg();
    const ws2 = ok('createWorkspace', await o.api.post('/workspaces', { name: 'Client B' }), 201).id;
    const orgWide = await createChannel(o.api, { kind: 'telegram', name: 'Org wide', target: '@orgwide' });
    const inDefault = await createChannel(o.api, { kind: 'telegram', name: 'Default ws', target: '@defaultws', workspaceId: o.workspaceId });
    const m = await srv.member(o.organizationId, 'member', [ws2]);
    const confined = srv.api(m.apiKey);

    const nullWs = await confined.post('/channels', { kind: 'telegram', name: 'x', target: '@xchannel', workspaceId: null });
    expect(nullWs.status).toBe(403);
    expect(nullWs.body.code).toBe('workspace_confined');
    const absentWs = await confined.post('/channels', { kind: 'telegram', name: 'x', target: '@xchannel' });
    expect(absentWs.status).toBe(403);
    const otherWs = await confined.post('/channels', { kind: 'telegram', name: 'x', target: '@xchannel', workspaceId: o.workspaceId });
    expect(otherWs.status).toBe(404);
    const own = await createChannel(confined, { kind: 'telegram', name: 'Mine', target: '@minechat', workspaceId: ws2 });
    expect(own.owner).toMatchObject({ userId: m.userId });

    expect((await listChannels(confined)).map((c) => c.id).sort()).toEqual([orgWide.id, own.id].sort());
    expect((await listChannels(o.api)).map((c) => c.id).sort()).toEqual([orgWide.id, inDefault.id, own.id].sort());

    // Outside its workspaces: does not exist. Organisation-wide: visible, but not its to change.
    expect((await confined.patch(`/channels/${inDefault.id}`, { enabled: false })).status).toBe(404);
    const wide = await confined.delete(`/channels/${orgWide.id}`);
    expect(wide.status).toBe(403);
    expect(wide.body.code).toBe('workspace_confined');
    expect(ok('updateChannel', await confined.patch(`/channels/${own.id}`, { enabled: false }))).toEqual({ ok: true });

    // Its monitors may use organisation-wide channels and its own, not another workspace's.
    const mon = await newMonitor(confined, ws2);
    const set = ok('setMonitorChannels', await confined.put(`/monitors/${mon}/channels`, { channelIds: [own.id, orgWide.id] }));
    expect(set.map((c: any) => c.name)).toEqual(['Mine', 'Org wide']);
    const bad = await confined.put(`/monitors/${mon}/channels`, { channelIds: [own.id, inDefault.id] });
    expect(bad.status).toBe(400);
    expect(bad.body.details.field).toBe('channelIds.1');
    const monDefault = await newMonitor(o.api, o.workspaceId);
    expect((await confined.get(`/monitors/${monDefault}/channels`)).status).toBe(404);
  });
});

describe('GET/PUT /monitors/{id}/channels', () => {
  it('sets, replaces and clears the whole set; ids must be usable for the monitor', async () => {
    const o = await newOrg();
    const ws2 = ok('createWorkspace', await o.api.post('/workspaces', { name: 'Other' }), 201).id;
    const a = await createChannel(o.api, { kind: 'telegram', name: 'Alpha', target: '@alphachat' });
    const b = await createChannel(o.api, { kind: 'email', name: 'Bravo', target: address(), workspaceId: o.workspaceId });
    const elsewhere = await createChannel(o.api, { kind: 'telegram', name: 'Elsewhere', target: '@elsewhere', workspaceId: ws2 });
    const mon = await newMonitor(o.api, o.workspaceId);
    const other = await newMonitor(o.api, o.workspaceId, 'Other');

    expect(ok('listMonitorChannels', await o.api.get(`/monitors/${mon}/channels`))).toEqual([]);
    // Unconfirmed channels may be set; duplicates count once; the answer is by name.
    const set = ok('setMonitorChannels', await o.api.put(`/monitors/${mon}/channels`, { channelIds: [b.id, a.id, b.id] }));
    expect(set.map((c: any) => c.id)).toEqual([a.id, b.id]);
    expect(set[1]).toMatchObject({ confirmed: false, kind: 'email' });
    expect(ok('listMonitorChannels', await o.api.get(`/monitors/${mon}/channels`))).toEqual(set);
    expect(ok('listMonitorChannels', await o.api.get(`/monitors/${other}/channels`))).toEqual([]);

    expect(ok('setMonitorChannels', await o.api.put(`/monitors/${mon}/channels`, { channelIds: [b.id] })).map((c: any) => c.id)).toEqual([b.id]);

    for (const [i, ids] of [[1, [a.id, 'ch_unknown']], [0, [elsewhere.id]]] as const) {
      const res = await o.api.put(`/monitors/${mon}/channels`, { channelIds: ids });
      expect(res.status).toBe(400);
      expect(res.body.details.field).toBe(`channelIds.${i}`);
    }
    // A refused set changes nothing.
    expect(ok('listMonitorChannels', await o.api.get(`/monitors/${mon}/channels`)).map((c: any) => c.id)).toEqual([b.id]);

    expect(ok('setMonitorChannels', await o.api.put(`/monitors/${mon}/channels`, { channelIds: null }))).toEqual([]);
    ok('setMonitorChannels', await o.api.put(`/monitors/${mon}/channels`, { channelIds: [a.id] }));
    expect(ok('setMonitorChannels', await o.api.put(`/monitors/${mon}/channels`, { channelIds: [] }))).toEqual([]);
    expect(ok('listMonitorChannels', await o.api.get(`/monitors/${mon}/channels`))).toEqual([]);

    const missing = await o.api.put(`/monitors/${mon}/channels`, {});
    expect(missing.status).toBe(400);
    expect((await o.api.get('/monitors/mon_nope/channels')).status).toBe(404);
    expect((await o.api.put('/monitors/mon_nope/channels', { channelIds: [] })).status).toBe(404);

    const { entries } = await auditText(o.api);
    const sets = entries.filter((e) => e.action === 'monitor.channels_set' && e.resourceId === mon);
    expect(sets.length).toBe(5);
    expect(sets.at(-1).changes.channelIds).toEqual({ from: [], to: [a.id, b.id].sort() });
  });
});

describe('protobuf', () => {
  const PB = 'application/x-protobuf';

  it('lists channels and replaces a monitor\'s set in protobuf (an empty StringList alerts nobody)', async () => {
    const o = await newOrg();
    const ch = await createChannel(o.api, { kind: 'telegram', name: 'TG', target: '@opsteam' });
    const mon = await newMonitor(o.api, o.workspaceId);
    ok('setMonitorChannels', await o.api.put(`/monitors/${mon}/channels`, { channelIds: [ch.id] }));

    const res = await fetch(`${srv.url}/api/v1/channels`, { headers: { authorization: `Bearer ${o.apiKey}`, accept: PB } });
    expect(res.status).toBe(200);
    const list = fromBinary(ListChannelsResponseSchema, new Uint8Array(await res.arrayBuffer()));
    expect(list.data.map((c) => [c.id, c.kind, c.target, c.confirmed, c.owner?.userId])).toEqual([[ch.id, 'telegram', '@opsteam', true, o.userId]]);

    const body = toBinary(SetMonitorChannelsRequestSchema, create(SetMonitorChannelsRequestSchema, { id: mon, channelIds: { values: [] } }));
    const put = await fetch(`${srv.url}/api/v1/monitors/${mon}/channels`, {
      method: 'PUT', headers: { authorization: `Bearer ${o.apiKey}`, 'content-type': PB, accept: PB }, body,
    });
    expect(put.status).toBe(200);
    expect(fromBinary(SetMonitorChannelsResponseSchema, new Uint8Array(await put.arrayBuffer())).data).toEqual([]);
    expect(ok('listMonitorChannels', await o.api.get(`/monitors/${mon}/channels`))).toEqual([]);
  });
});
