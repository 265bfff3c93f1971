/**
 * PATCH /channels/{id} with `name` and `target` beside `enabled`: the target
 * validated by the kind as on create, an email address changed is
 * unconfirmed again with one confirmation message, a webhook keeps its
 * secret; refusals, confinement and the audit log; over REST and Connect.
 */
import { routes } from '../gen/routes';
import { verifyWebhookSignature } from '../src/alerting/channels/webhook';
import { newId } from '../src/crypto/ids';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';
import { connectCall, type WireRequest } from './support/wire-call';

let srv: TestServer;
let hook: HttpReceiver;
let smtp: SmtpReceiver;

beforeAll(async () => {
  hook = await startHttpReceiver();
  smtp = await startSmtpServer();
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', SMTP_URL: smtp.url, MAIL_FROM: 'Vigil <alerts@vigil.test>' });
});
afterAll(async () => {
  await srv?.close();
  await hook?.close();
  await smtp?.close();
});

async function newOrg() {
  const o = await srv.org({ plan: 'business' });
  return { ...o, api: srv.api(o.apiKey) };
}

const create = async (api: ApiClient, body: Record<string, unknown>) => ok('createChannel', await api.post('/channels', body), 201);
const channel = async (api: ApiClient, id: string) => (ok('listChannels', await api.get('/channels')) as any[]).find((c) => c.id === id);
const audits = async (api: ApiClient, id: string) => (ok('listAuditEntries', await api.get('/audit?limit=200')) as any[]).filter((e) => e.resourceId === id);

let seq = 0;
const address = () => `person${++seq}-${Date.now().toString(36)}@example.test`;
/** The confirmation links mailed to `to`, oldest first. */
const links = (to: string) => smtp.messages.filter((m) => m.to.includes(to)).map((m) => /\/confirm\/[A-Za-z0-9_-]+/.exec(m.text)?.[0]).filter(Boolean) as string[];
const follow = async (link: string) => (await fetch(`${srv.url}${link}`)).status;

describe('PATCH /channels/{id}: name and target', () => {
  it('renames and retargets a webhook: validated as on create, masked where shown, the secret unchanged', async () => {
    const o = await newOrg();
    const ch = await create(o.api, { kind: 'webhook', name: 'Ops hook', target: `${hook.url}/old` });
    const bad = await o.api.patch(`/channels/${ch.id}`, { target: 'ftp://files.example/x' });
    expect({ status: bad.status, code: bad.body.code, field: bad.body.details?.field }).toEqual({ status: 400, code: expect.any(String), field: 'target' });

    expect(ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { name: '  Ops hook v2 ', target: `${hook.url}/new?token=cred-in-query-99` }))).toEqual({ ok: true });
    const now = await channel(o.api, ch.id);
    expect(now).toMatchObject({ name: 'Ops hook v2', target: `${hook.url}/…`, confirmed: true, enabled: true, secretStored: true });
    expect(JSON.stringify(now)).not.toContain('cred-in-query-99');

    // Deliveries go to the new target, signed with the secret shown at creation.
    hook.respondWith(200, 'ok');
    const n = hook.requests.length;
    expect(ok('testChannel', await o.api.post(`/channels/${ch.id}/test`))).toEqual({ delivered: true, error: null });
    await hook.waitFor(n + 1);
    const req = hook.requests[n];
    expect(req.path).toBe('/new?token=cred-in-query-99');
    expect(verifyWebhookSignature(ch.secret, req.body, req.headers['vigil-signature'])).toBe(true);

    const [entry] = await audits(o.api, ch.id);
    expect(entry.action).toBe('channel.updated');
    // A webhook shows only its origin, the same before and after: the change is recorded as a fact, without values.
    expect(ch.target).toBe(`${hook.url}/…`);
    expect(entry.changes).toEqual({ name: { from: 'Ops hook', to: 'Ops hook v2' }, target: { changed: true } });
    const text = JSON.stringify(await audits(o.api, ch.id));
    expect(text).not.toContain('cred-in-query-99');
    expect(text).not.toContain(ch.secret);
  });

  it('validates each kind\'s target as create does, and the name', async () => {
    const o = await newOrg();
    const pd = await create(o.api, { kind: 'pagerduty', name: 'PD', target: 'pdkey0123456789abcdef0123456789z' });
    const slack = await create(o.api, { kind: 'slack', name: 'Slack', target: 'https://hooks.slack.com/services/T0/B0/abc' });
    const cases: [string, any, string, string][] = [
      ['short pagerduty key', await o.api.patch(`/channels/${pd.id}`, { target: 'short' }), 'target', 'invalid_target'],
      ['slack not a url', await o.api.patch(`/channels/${slack.id}`, { target: 'not a url' }), 'target', 'invalid_target'],
      ['blank name', await o.api.patch(`/channels/${pd.id}`, { name: '   ' }), 'name', 'invalid_field'],
      ['long name', await o.api.patch(`/channels/${pd.id}`, { name: 'n'.repeat(101) }), 'name', 'invalid_field'],
      ['empty target', await o.api.patch(`/channels/${pd.id}`, { target: '' }), 'target', 'invalid_field'],
      ['kind is not changeable', await o.api.patch(`/channels/${pd.id}`, { kind: 'slack' }), 'kind', 'unknown_field'],
      ['nothing', await o.api.patch(`/channels/${pd.id}`, {}), 'body', 'empty_change'],
    ];
    // The create refusal of the same target, for the code (one validation for both).
    const createCode = (await o.api.post('/channels', { kind: 'pagerduty', name: 'x', target: 'short' })).body.code;
    for (const [what, res, field, code] of cases) {
      const want = code === 'invalid_target' ? createCode : code;
      expect({ what, status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ what, status: 400, code: want, field });
    }
    expect((await channel(o.api, pd.id)).name).toBe('PD');
    expect(await audits(o.api, pd.id)).toHaveLength(1); // only its creation
  });

  it('an email address changed is unconfirmed again: one message to the new address, the old link dead, the same address no change', async () => {
    const o = await newOrg();
    const first = address();
    const ch = await create(o.api, { kind: 'email', name: 'Mail', target: first });
    await until(() => links(first).length === 1);
    expect(await follow(links(first)[0])).toBe(200);
    expect((await channel(o.api, ch.id)).confirmed).toBe(true);

    // The same address changes nothing: still confirmed, no message.
    expect(ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { target: first }))).toEqual({ ok: true });
    expect((await channel(o.api, ch.id)).confirmed).toBe(true);
    expect(links(first)).toHaveLength(1);

    const second = address();
    expect(ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { target: second }))).toEqual({ ok: true });
    expect(await channel(o.api, ch.id)).toMatchObject({ target: second, confirmed: false });
    await until(() => links(second).length === 1);
    // Nothing else goes to it until it agrees.
    const test = await o.api.post(`/channels/${ch.id}/test`);
    expect({ status: test.status, code: test.body.code }).toEqual({ status: 409, code: 'channel_not_confirmed' });

    // Changed again before agreeing: the link of the address left behind stops working.
    const third = address();
    ok('updateChannel', await o.api.patch(`/channels/${ch.id}`, { target: third }));
    await until(() => links(third).length === 1);
    expect(await follow(links(second)[0])).toBe(404);
    expect((await channel(o.api, ch.id)).confirmed).toBe(false);
    expect(await follow(links(third)[0])).toBe(200);
    expect(await channel(o.api, ch.id)).toMatchObject({ target: third, confirmed: true });
    expect(links(first)).toHaveLength(1);
    expect(links(second)).toHaveLength(1);

    const changes = (await audits(o.api, ch.id)).filter((e) => e.action === 'channel.updated').map((e) => e.changes).reverse();
    expect(changes).toEqual([
      { target: { from: first, to: second }, confirmed: { from: true, to: false } },
      { target: { from: second, to: third } },
    ]);
  });

  it('a channel its recipient enrols keeps its target (400 target_not_changeable) but may be renamed', async () => {
    const o = await newOrg();
    const id = newId('ch');
    await srv.db.insertInto('notification_channels').values({
      id, organization_id: o.organizationId, workspace_id: null, owner_membership_id: null, kind: 'sms', name: 'Phone', target: '+1555…0100',
      enabled: true, confirmed_at: new Date(), target_enc: null, secret_enc: null, config: '{}', confirmation_token_hash: null,
    }).execute();
    const res = await o.api.patch(`/channels/${id}`, { target: '+15555550199' });
    expect({ status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ status: 400, code: 'target_not_changeable', field: 'target' });
    ok('updateChannel', await o.api.patch(`/channels/${id}`, { name: 'Work phone' }));
    expect(await channel(o.api, id)).toMatchObject({ name: 'Work phone', target: '+1555…0100' });
  });
});

describe('who may change a channel', () => {
  it('a viewer is refused naming the permission; a confined key changes its workspace\'s channels only', async () => {
    const o = await newOrg();
    const orgWide = await create(o.api, { kind: 'telegram', name: 'Org wide', target: '@orgwide' });
    const ws2 = ok('createWorkspace', await o.api.post('/workspaces', { name: 'Client B' }), 201).id;
    const inDefault = await create(o.api, { kind: 'telegram', name: 'Default', target: '@defaultws', workspaceId: o.workspaceId });
    const viewer = srv.api((await srv.member(o.organizationId, 'viewer')).apiKey);
    const denied = await viewer.patch(`/channels/${orgWide.id}`, { name: 'Mine' });
    expect({ status: denied.status, permission: denied.body.vars?.permission }).toEqual({ status: 403, permission: 'notification_channel:manage' });

    const confined = srv.api((await srv.member(o.organizationId, 'member', [ws2])).apiKey);
    const wide = await confined.patch(`/channels/${orgWide.id}`, { name: 'Mine', target: '@mine' });
    expect({ status: wide.status, code: wide.body.code, permission: wide.body.vars?.permission }).toEqual({ status: 403, code: 'workspace_confined', permission: 'notification_channel:manage' });
    expect((await confined.patch(`/channels/${inDefault.id}`, { name: 'Mine' })).status).toBe(404);
    const own = await create(confined, { kind: 'telegram', name: 'Own', target: '@ownchat', workspaceId: ws2 });
    ok('updateChannel', await confined.patch(`/channels/${own.id}`, { name: 'Own 2', target: '@ownchat2' }));
    expect(await channel(o.api, own.id)).toMatchObject({ name: 'Own 2', target: '@ownchat2' });
    expect(await channel(o.api, orgWide.id)).toMatchObject({ name: 'Org wide', target: '@orgwide' });
    expect(await channel(o.api, inDefault.id)).toMatchObject({ name: 'Default', target: '@defaultws' });
  });
});

describe('over Connect', () => {
  it.each([false, true])('renames and retargets (binary %s), with the same refusals', async (binary) => {
    const o = await newOrg();
    const ch = await create(o.api, { kind: 'telegram', name: 'TG', target: '@before' });
    const route = routes.find((r) => r.operationId === 'updateChannel')!;
    const call = (body: unknown) => connectCall(srv.url, { route, token: o.apiKey, path: { id: ch.id }, query: {}, body } as WireRequest, binary);
    const done = await call({ name: 'TG 2', target: '@after' });
    expect(done.json.data).toEqual({ ok: true });
    expect(await channel(o.api, ch.id)).toMatchObject({ name: 'TG 2', target: '@after', enabled: true });
    const off = await call({ enabled: false });
    expect(off.json.data).toEqual({ ok: true });
    expect(await channel(o.api, ch.id)).toMatchObject({ name: 'TG 2', enabled: false });
    const bad = await call({ name: ' ' });
    expect({ status: bad.status, code: bad.code, field: (bad.details as any)?.field }).toEqual({ status: 400, code: 'invalid_field', field: 'name' });
    const empty = await call({});
    expect({ status: empty.status, code: empty.code }).toEqual({ status: 400, code: 'empty_change' });
  });
});

/** Polls `fn` until it is true (every 50 ms, up to 10 s). */
async function until(fn: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
