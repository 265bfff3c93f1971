/**
 * The channel kinds on their own: target validation, the exact wire format
 * each provider receives (against local receivers), and every failure path a
 * delivery can take. No database, no server.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../src/pipeline/errors';
import { channelKinds, isChannelKind } from '../src/alerting/channels';
import type { AlertEvent, AlertIncident, AlertMessage, ChannelKind, ChannelSecrets, DeliveryContext } from '../src/alerting/channels/channel';
import { signWebhook, verifyWebhookSignature } from '../src/alerting/channels/webhook';
import { alertText, formatDuration } from '../src/alerting/channels/text';
import { chainPem, makeCa, makeLeaf } from './support/certs';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';

const BOT_TOKEN = '123456:AAHsecretBotTokenValue-xyz';
const ROUTING_KEY = 'R0ut1ngKeyR0ut1ngKeyR0ut1ngKey32';
const GENIE_KEY = 'genie-0123-4567-89ab-cdef0123abcd';

let rx: HttpReceiver;
let smtp: SmtpReceiver;

beforeAll(async () => { [rx, smtp] = await Promise.all([startHttpReceiver(), startSmtpServer()]); });
afterAll(async () => { await Promise.all([rx.close(), smtp.close()]); });
beforeEach(() => { rx.requests.length = 0; rx.respondWith(200); });

function ctx(over: { net?: Partial<DeliveryContext['net']>; providers?: Partial<DeliveryContext['providers']>; signal?: AbortSignal } = {}): DeliveryContext {
  return {
    net: { allowPrivate: true, extraCa: [], ...over.net },
    providers: {
      smtpUrl: smtp.url, mailFrom: 'Vigil <vigil@example.com>', telegramApiUrl: `${rx.url}/telegram`, telegramBotToken: BOT_TOKEN,
      pagerdutyEventsUrl: `${rx.url}/v2/enqueue`, jsmApiUrl: `${rx.url}/jsm/v2/alerts`,
      smsUrl: `${rx.url}/sms`, smsAccountSid: null, smsAuthToken: null, smsFrom: null, ...over.providers,
    },
    signal: over.signal ?? AbortSignal.timeout(5000),
    baseUrl: 'http://vigil.test',
  };
}

const incident: AlertIncident = {
  id: 'inc_1', title: 'API is down', cause: 'assertion_failed', severity: 'critical', status: 'open', monitorId: 'mon_1',
  monitorName: 'API', startedAt: '2024-05-01T10:00:00.000Z', acknowledgedAt: null, resolvedAt: null,
};
function message(event: AlertEvent = 'incident.opened', over: Partial<AlertIncident> = {}): AlertMessage {
  const inc = event === 'test' ? null : { ...incident, ...over };
  return { id: `dlv_${event}`, event, incident: inc, errorIssue: null, text: alertText(event, inc, { detail: 'status_code 503 is not < 400', actor: 'Alice' }), occurredAt: '2024-05-01T10:00:05.000Z' };
}
function channel(kind: ChannelKind, target: string, secret: string | null = null): ChannelSecrets {
  return { id: `ch_${kind}`, name: `My ${kind}`, target: channelKinds[kind].parseTarget(target).target, secret, config: {} };
}
function rejectsTarget(kind: ChannelKind, target: string, field = 'target') {
  let err: unknown;
  try { channelKinds[kind].parseTarget(target); } catch (e) { err = e; }
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(400);
  expect((err as ApiError).toBody().details?.field).toBe(field);
}

describe('kinds and targets', () => {
  it('lists every kind; only the first eight are creatable', () => {
    expect(Object.keys(channelKinds).sort()).toEqual(['discord', 'email', 'jsm', 'pagerduty', 'push', 'satellite', 'slack', 'sms', 'teams', 'telegram', 'webhook', 'whatsapp']);
    expect(Object.entries(channelKinds).filter(([, d]) => d.creatable).map(([k]) => k).sort())
      .toEqual(['discord', 'email', 'jsm', 'pagerduty', 'slack', 'teams', 'telegram', 'webhook']);
    expect(isChannelKind('slack')).toBe(true);
    expect(isChannelKind('toString')).toBe(false);
    expect(channelKinds.email.needsConfirmation).toBe(true);
    expect(Object.entries(channelKinds).filter(([, d]) => d.hasSecret).map(([k]) => k)).toEqual(['webhook']);
  });

  const good: [ChannelKind, string, { target?: string; display: string; secretStored: boolean }][] = [
    ['email', ' Bob.Smith+ops@Example.COM ', { target: 'Bob.Smith+ops@example.com', display: 'Bob.Smith+ops@example.com', secretStored: false }],
    ['email', 'ops@bücher.de', { target: 'ops@xn--bcher-kva.de', display: 'ops@xn--bcher-kva.de', secretStored: false }],
    ['webhook', 'https://user:pa55@hooks.example.com/in/vigil?token=abc#x', { display: 'https://hooks.example.com/…', secretStored: true }],
    ['webhook', 'http://10.0.0.5:8080/alerts', { target: 'http://10.0.0.5:8080/alerts', display: 'http://10.0.0.5:8080/…', secretStored: true }],
    ['slack', 'https://hooks.slack.com/services/T000/B000/XXXX', { display: 'https://hooks.slack.com/…', secretStored: true }],
    ['discord', 'https://discord.com/api/webhooks/1/abc', { display: 'https://discord.com/…', secretStored: true }],
    ['teams', 'https://prod-01.westus.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?sig=s3cret', { display: 'https://prod-01.westus.logic.azure.com/…', secretStored: true }],
    ['telegram', '-1001234567890', { display: '-1001234567890', secretStored: false }],
    ['telegram', '@vigil_alerts', { display: '@vigil_alerts', secretStored: false }],
    ['telegram', '987654321', { display: '987654321', secretStored: false }],
    ['pagerduty', ROUTING_KEY, { display: '…ey32', secretStored: true }],
    ['jsm', GENIE_KEY, { display: '…abcd', secretStored: true }],
  ];
  it.each(good)('%s accepts %s', (kind, target, want) => {
    const parsed = channelKinds[kind].parseTarget(target);
    expect(parsed).toMatchObject({ display: want.display, secretStored: want.secretStored, config: {} });
    if (want.target) expect(parsed.target).toBe(want.target);
    expect(parsed.display).not.toMatch(/pa55|token=abc|s3cret|XXXX|R0ut1ng|genie-0123/);
  });

  const bad: [ChannelKind, string][] = [
    ['email', ''], ['email', 'bob'], ['email', 'bob@'], ['email', '@example.com'], ['email', 'bob@localhost'], ['email', 'a b@example.com'],
    ['email', 'bob@example.com, eve@example.com'], ['email', 'bob..x@example.com'], ['email', 'bob@-bad.example'], ['email', 'bob@example.123'],
    ['webhook', 'ftp://example.com/x'], ['webhook', 'example.com/hook'], ['webhook', 'https://'], ['webhook', `https://example.com/${'a'.repeat(2048)}`],
    ['webhook', 'https://exa mple.com/'], ['webhook', 'javascript:alert(1)'],
    ['slack', 'hooks.slack.com/services/x'], ['discord', 'mailto:x@example.com'], ['teams', ''],
    ['telegram', '12ab'], ['telegram', '@ab'], ['telegram', '-'], ['telegram', 'https://t.me/x'], ['telegram', '0'],
    ['pagerduty', 'short'], ['pagerduty', `${ROUTING_KEY}x`], ['pagerduty', 'R0ut1ngKeyR0ut1ngKeyR0ut1ngKey3!'],
    ['jsm', ''], ['jsm', 'has space'], ['jsm', 'x'.repeat(201)],
  ];
  const labelled = bad.map(([kind, t]) => [kind, t.length > 40 ? `${t.slice(0, 24)}… (${t.length} chars)` : JSON.stringify(t), t] as const);
  it.each(labelled)('%s rejects %s with 400 on target', (kind, _label, target) => rejectsTarget(kind, target));

  it('sms cannot be created; it delivers through the Twilio-compatible provider once configured', async () => {
    expect(channelKinds.sms.creatable).toBe(false);
    expect(() => channelKinds.sms.parseTarget('+447700900123')).toThrow(/enrolled by the receiving person and cannot be created through the API/);
    const ch = { id: 'c', name: 'n', target: '+447700900123', secret: null, config: {} };
    expect(await channelKinds.sms.deliver(ch, message(), ctx())).toMatchObject({ delivered: false, permanent: true, error: expect.stringMatching(/SMS is not configured/) });
    rx.respondWith(201, { sid: 'SM1', status: 'queued' });
    const sent = await channelKinds.sms.deliver(ch, message(), ctx({ providers: { smsAccountSid: 'AC123', smsAuthToken: 'sms-token-secret', smsFrom: '+15005550006' } }));
    expect(sent).toEqual({ delivered: true, error: null });
    const [req] = rx.requests;
    expect(req.path).toBe('/sms/Accounts/AC123/Messages.json');
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('AC123:sms-token-secret').toString('base64')}`);
    const form = new URLSearchParams(req.body);
    expect(form.get('To')).toBe('+447700900123');
    expect(form.get('From')).toBe('+15005550006');
    expect(form.get('Body')).toMatch(/^Vigil: /);
    rx.respondWith(400, { code: 21211, message: "The 'To' number is not a valid phone number." });
    const refused = await channelKinds.sms.deliver(ch, message(), ctx({ providers: { smsAccountSid: 'AC123', smsAuthToken: 'sms-token-secret', smsFrom: '+15005550006' } }));
    expect(refused).toMatchObject({ delivered: false, permanent: true });
    expect(refused.error).not.toContain('sms-token-secret');
  });

  it.each(['whatsapp', 'satellite', 'push'] as ChannelKind[])('%s cannot be created and does not deliver yet', async (kind) => {
    expect(channelKinds[kind].creatable).toBe(false);
    rejectsTarget(kind, '+15550100', 'kind');
    expect(() => channelKinds[kind].parseTarget('x')).toThrow(/enrolled by the receiving person and cannot be created through the API/);
    const res = await channelKinds[kind].deliver({ id: 'c', name: 'n', target: '+15550100', secret: null, config: {} }, message(), ctx());
    expect(res).toMatchObject({ delivered: false, error: 'this channel kind is not available on this server yet' });
  });
});

describe('texts', () => {
  it('words each event on one line', () => {
    expect(alertText('incident.opened', incident, { detail: 'status_code 503 is not < 400' })).toBe('🔴 API is down: status_code 503 is not < 400');
    expect(alertText('incident.opened', incident)).toBe('🔴 API is down: assertion failed');
    expect(alertText('incident.resolved', { ...incident, resolvedAt: '2024-05-01T10:04:12.000Z' })).toBe('✅ API is up again after 4m 12s');
    expect(alertText('incident.acknowledged', incident, { actor: 'Alice' })).toBe('👀 API acknowledged by Alice');
    expect(alertText('test', null)).toBe('🧪 Test alert from Vigil: this channel works.');
    expect([45, 60, 252, 3600, 3900, 90000].map(formatDuration)).toEqual(['45s', '1m', '4m 12s', '1h', '1h 5m', '1d 1h']);
  });
});

describe('webhook', () => {
  const SECRET = 'whsec_test_secret_value';

  it('POSTs the signed JSON payload with the Vigil headers', async () => {
    const ch = channel('webhook', `${rx.url}/hook?k=1`, SECRET);
    const before = Math.floor(Date.now() / 1000);
    expect(await channelKinds.webhook.deliver(ch, message(), ctx())).toEqual({ delivered: true, error: null });
    const [req] = await rx.waitFor(1);
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook?k=1');
    expect(req.headers).toMatchObject({
      'content-type': 'application/json', 'user-agent': 'Vigil-Webhook/1', 'vigil-event': 'incident.opened', 'vigil-delivery': 'dlv_incident.opened',
    });
    expect(req.json).toEqual({ id: 'dlv_incident.opened', event: 'incident.opened', occurredAt: '2024-05-01T10:00:05.000Z', text: '🔴 API is down: status_code 503 is not < 400', incident, errorIssue: null });
    const sig = req.headers['vigil-signature'];
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(Number(/t=(\d+)/.exec(sig)![1])).toBeGreaterThanOrEqual(before);
    expect(verifyWebhookSignature(SECRET, req.body, sig)).toBe(true);
    expect(verifyWebhookSignature(SECRET, req.body.replace('API', 'APX'), sig)).toBe(false);
    expect(verifyWebhookSignature('another secret', req.body, sig)).toBe(false);
    expect(verifyWebhookSignature(SECRET, req.body, sig, 300, Date.now() / 1000 + 301)).toBe(false);
  });

  it('signs "<t>.<body>" Stripe-style and refuses stale or malformed headers', () => {
    const body = '{"a":1}';
    const header = signWebhook('k', body, 1_700_000_000);
    expect(header).toBe(`t=1700000000,v1=${require('node:crypto').createHmac('sha256', 'k').update(`1700000000.${body}`).digest('hex')}`);
    expect(verifyWebhookSignature('k', body, header, 300, 1_700_000_299)).toBe(true);
    expect(verifyWebhookSignature('k', Buffer.from(body), header, 300, new Date(1_699_999_800_000))).toBe(true);
    expect(verifyWebhookSignature('k', body, header, 300, 1_700_000_301)).toBe(false);
    expect(verifyWebhookSignature('k', body, `t=1700000000,v1=${'0'.repeat(64)},${header.split(',')[1]}`, 300, 1_700_000_000)).toBe(true);
    for (const h of ['', 'v1=abc', 't=1700000000', `t=x,${header.split(',')[1]}`, header.replace(/.$/, 'g')]) {
      expect(verifyWebhookSignature('k', body, h, 300, 1_700_000_000)).toBe(false);
    }
  });

  it('sends URL credentials as Basic auth and never delivers unsigned', async () => {
    await channelKinds.webhook.deliver(channel('webhook', `${rx.url.replace('//', '//user:pa55@')}/basic`, SECRET), message(), ctx());
    const [req] = await rx.waitFor(1);
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('user:pa55').toString('base64')}`);
    const res = await channelKinds.webhook.deliver(channel('webhook', `${rx.url}/x`), message(), ctx());
    expect(res).toMatchObject({ delivered: false, permanent: true, error: 'this webhook channel has no signing secret' });
    expect(rx.requests).toHaveLength(1);
  });
});

describe('HTTP failures', () => {
  const deliver = (url: string, c = ctx()) => channelKinds.webhook.deliver(channel('webhook', url, 's3cr3t-signing'), message(), c);

  it('a 5xx is a retryable failure in the provider\'s words; a 4xx is permanent, 408/429 are not', async () => {
    rx.respondWith(500, { error: 'receiver is on fire' });
    const r500 = await deliver(`${rx.url}/h`);
    expect(r500).toEqual({ delivered: false, error: 'HTTP 500: receiver is on fire', permanent: false });
    rx.respondWith(400, 'missing field "x"');
    expect(await deliver(`${rx.url}/h`)).toEqual({ delivered: false, error: 'HTTP 400: missing field "x"', permanent: true });
    for (const status of [408, 429]) {
      rx.respondWith(status, '');
      expect(await deliver(`${rx.url}/h`)).toMatchObject({ delivered: false, permanent: false, error: expect.stringMatching(new RegExp(`^HTTP ${status} `)) });
    }
    rx.respondWith(502, '<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>');
    expect((await deliver(`${rx.url}/h`)).error).toBe('HTTP 502: 502 Bad Gateway');
    rx.respondWith(503, 'x'.repeat(5000));
    expect((await deliver(`${rx.url}/h`)).error!.length).toBeLessThan(220);
  });

  it('does not follow redirects', async () => {
    const other = await startHttpReceiver();
    try {
      rx.respondWith(302, '', { Location: `${other.url}/elsewhere` });
      const res = await deliver(`${rx.url}/moved`);
      expect(res).toEqual({ delivered: false, permanent: false, error: `HTTP 302: redirected to ${other.url}/elsewhere; deliveries do not follow redirects` });
      rx.respondWith(308, '', { Location: `${other.url}/elsewhere` });
      expect((await deliver(`${rx.url}/moved`)).permanent).toBe(true);
      expect(rx.requests).toHaveLength(2);
      expect(other.requests).toHaveLength(0);
    } finally { await other.close(); }
  });

  it('reports a refused connection and a timeout', async () => {
    const closed = await startHttpReceiver();
    await closed.close();
    const refused = await deliver(`${closed.url}/x`);
    expect(refused).toEqual({ delivered: false, error: `connection refused (${closed.url.slice('http://'.length)})` });

    const sockets = new Set<import('node:net').Socket>();
    const silent = http.createServer(() => { /* never answers */ }).on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const started = Date.now();
      const res = await deliver(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/slow`, ctx({ signal: AbortSignal.timeout(200) }));
      expect(res).toMatchObject({ delivered: false, error: expect.stringMatching(/^timed out after 0\.[1-3] s$/) });
      expect(res.permanent).toBeFalsy();
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('refuses private addresses when the policy says so, literal or resolved', async () => {
    const strict = ctx({ net: { allowPrivate: false } });
    expect(await deliver(`${rx.url}/x`, strict)).toEqual({ delivered: false, permanent: true, error: '127.0.0.1 is a private address this server may not reach' });
    const byName = await deliver(`${rx.url.replace('127.0.0.1', 'localhost')}/x`, ctx({ net: { allowPrivate: false } }));
    expect(byName).toMatchObject({ delivered: false, permanent: true, error: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), a private address/) });
    expect(rx.requests).toHaveLength(0);
  });

  it('verifies TLS against Node\'s roots plus the extra CAs', async () => {
    const ca = makeCa();
    const leaf = makeLeaf(ca, { names: ['localhost'] });
    const server = https.createServer({ key: leaf.key, cert: chainPem(leaf) }, (_req, res) => { res.writeHead(204); res.end(); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://localhost:${(server.address() as AddressInfo).port}/tls`;
    try {
      expect(await deliver(url)).toMatchObject({ delivered: false, error: expect.stringMatching(/^TLS error: certificate not trusted \(/) });
      expect(await deliver(url, ctx({ net: { extraCa: [ca.cert] } }))).toEqual({ delivered: true, error: null });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('chat kinds', () => {
  it('slack: text plus one mrkdwn section, escaped', async () => {
    const ch = channel('slack', `${rx.url}/services/T0/B0/secretpath`);
    const msg = { ...message(), text: '🔴 <API> & co is down' };
    expect(await channelKinds.slack.deliver(ch, msg, ctx())).toEqual({ delivered: true, error: null });
    const [req] = await rx.waitFor(1);
    expect(req.path).toBe('/services/T0/B0/secretpath');
    expect(req.headers['content-type']).toBe('application/json');
    const text = '🔴 &lt;API&gt; &amp; co is down';
    expect(req.json).toEqual({ text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] });
    rx.respondWith(403, 'invalid_token');
    expect(await channelKinds.slack.deliver(ch, msg, ctx())).toEqual({ delivered: false, error: 'HTTP 403: invalid_token', permanent: true });
  });

  it('discord: content plus one embed, mentions disabled; 204 is success', async () => {
    rx.respondWith(204);
    const ch = channel('discord', `${rx.url}/api/webhooks/1/tok`);
    expect(await channelKinds.discord.deliver(ch, message(), ctx())).toEqual({ delivered: true, error: null });
    const [req] = await rx.waitFor(1);
    expect(req.path).toBe('/api/webhooks/1/tok');
    expect(req.json).toEqual({
      content: '🔴 API is down: status_code 503 is not < 400',
      embeds: [{ title: 'API is down', description: expect.stringContaining('**Cause:** assertion failed'), color: 0xe5484d, timestamp: '2024-05-01T10:00:05.000Z' }],
      allowed_mentions: { parse: [] },
    });
  });

  it('teams: an Adaptive Card message', async () => {
    rx.respondWith(202, '');
    const ch = channel('teams', `${rx.url}/workflows/x/paths/invoke?sig=abc`);
    expect(await channelKinds.teams.deliver(ch, message('incident.resolved', { resolvedAt: '2024-05-01T10:04:12.000Z', status: 'resolved' }), ctx()))
      .toEqual({ delivered: true, error: null });
    const [req] = await rx.waitFor(1);
    expect(req.path).toBe('/workflows/x/paths/invoke?sig=abc');
    expect(req.json.type).toBe('message');
    const [att] = req.json.attachments;
    expect(att.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(att.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(att.content.body[0]).toMatchObject({ type: 'TextBlock', text: 'API is up again', color: 'Good' });
    expect(att.content.body[1]).toMatchObject({ type: 'TextBlock', text: '✅ API is up again after 4m 12s' });
    expect(att.content.body[2].facts).toContainEqual({ title: 'Resolved', value: '2024-05-01T10:04:12.000Z' });
  });
});

describe('telegram', () => {
  const ch = () => channel('telegram', '-1001234567890');

  it('POSTs sendMessage through the configured bot', async () => {
    rx.respondWith(200, { ok: true, result: { message_id: 1 } });
    expect(await channelKinds.telegram.deliver(ch(), message(), ctx())).toEqual({ delivered: true, error: null });
    const [req] = await rx.waitFor(1);
    expect(req.path).toBe(`/telegram/bot${BOT_TOKEN}/sendMessage`);
    expect(req.json).toEqual({ chat_id: '-1001234567890', text: '🔴 API is down: status_code 503 is not < 400', disable_web_page_preview: true });
  });

  it('answers in Telegram\'s words and never shows the token', async () => {
    rx.respondWith(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });
    expect(await channelKinds.telegram.deliver(ch(), message(), ctx())).toEqual({ delivered: false, error: 'Bad Request: chat not found', permanent: true });
    rx.respondWith(429, { ok: false, error_code: 429, description: 'Too Many Requests: retry after 5' });
    expect(await channelKinds.telegram.deliver(ch(), message(), ctx())).toEqual({ delivered: false, error: 'Too Many Requests: retry after 5' });
    rx.respondWith(500, `proxy failed for /bot${BOT_TOKEN}/sendMessage`);
    const echoed = await channelKinds.telegram.deliver(ch(), message(), ctx());
    expect(echoed.error).toBe('HTTP 500: proxy failed for /bot****/sendMessage');
    const refused = await channelKinds.telegram.deliver(ch(), message(), ctx({ providers: { telegramApiUrl: 'http://127.0.0.1:1' } }));
    expect(refused.delivered).toBe(false);
    for (const r of [echoed, refused]) expect(r.error).not.toContain(BOT_TOKEN.split(':')[1]);
    expect(await channelKinds.telegram.deliver(ch(), message(), ctx({ providers: { telegramBotToken: null } })))
      .toEqual({ delivered: false, error: 'no Telegram bot is configured (TELEGRAM_BOT_TOKEN)' });
  });
});

describe('pagerduty', () => {
  const ch = () => channel('pagerduty', ROUTING_KEY);
  beforeEach(() => rx.respondWith(202, { status: 'success', message: 'Event processed', dedup_key: 'inc_1' }));

  it('triggers, acknowledges and resolves by the incident id', async () => {
    expect(await channelKinds.pagerduty.deliver(ch(), message('incident.opened', { severity: 'major' }), ctx())).toEqual({ delivered: true, error: null });
    await channelKinds.pagerduty.deliver(ch(), message('incident.acknowledged'), ctx());
    await channelKinds.pagerduty.deliver(ch(), message('incident.resolved'), ctx());
    const [trigger, ack, resolve] = await rx.waitFor(3);
    expect(trigger.path).toBe('/v2/enqueue');
    expect(trigger.json).toEqual({
      routing_key: ROUTING_KEY, event_action: 'trigger', dedup_key: 'inc_1', client: 'Vigil',
      payload: {
        summary: '🔴 API is down: status_code 503 is not < 400', source: 'API', severity: 'error', timestamp: '2024-05-01T10:00:00.000Z',
        component: 'mon_1', custom_details: { cause: 'assertion_failed', status: 'open', incidentId: 'inc_1' },
      },
    });
    expect(ack.json).toEqual({ routing_key: ROUTING_KEY, event_action: 'acknowledge', dedup_key: 'inc_1' });
    expect(resolve.json).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: 'inc_1' });
  });

  it('a test triggers then resolves a throwaway alert', async () => {
    expect(await channelKinds.pagerduty.deliver(ch(), message('test'), ctx())).toEqual({ delivered: true, error: null });
    const [trigger, resolve] = await rx.waitFor(2);
    expect(trigger.json).toMatchObject({ event_action: 'trigger', dedup_key: 'vigil-test-dlv_test', payload: { severity: 'info', source: 'Vigil' } });
    expect(resolve.json).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: 'vigil-test-dlv_test' });
  });

  it('reports PagerDuty\'s refusal without the routing key', async () => {
    rx.respondWith(400, { status: 'invalid event', message: 'Event object is invalid', errors: [`'routing_key' ${ROUTING_KEY} is invalid`] });
    const res = await channelKinds.pagerduty.deliver(ch(), message(), ctx());
    expect(res).toEqual({ delivered: false, permanent: true, error: "HTTP 400: Event object is invalid; 'routing_key' **** is invalid" });
    expect(rx.requests).toHaveLength(1);
  });
});

describe('jsm', () => {
  const ch = () => channel('jsm', GENIE_KEY);
  beforeEach(() => rx.respondWith(202, { result: 'Request will be processed', took: 0.01, requestId: 'r1' }));

  it('creates, acknowledges and closes by alias with a GenieKey', async () => {
    expect(await channelKinds.jsm.deliver(ch(), message('incident.opened', { severity: 'minor' }), ctx())).toEqual({ delivered: true, error: null });
    await channelKinds.jsm.deliver(ch(), message('incident.acknowledged'), ctx());
    await channelKinds.jsm.deliver(ch(), message('incident.resolved'), ctx());
    const [create, ack, close] = await rx.waitFor(3);
    for (const r of [create, ack, close]) expect(r.headers.authorization).toBe(`GenieKey ${GENIE_KEY}`);
    expect(create.path).toBe('/jsm/v2/alerts');
    expect(create.json).toMatchObject({
      message: 'API is down', alias: 'inc_1', description: '🔴 API is down: status_code 503 is not < 400', priority: 'P3', source: 'Vigil',
      details: { monitor: 'API', cause: 'assertion failed', incidentId: 'inc_1' },
    });
    expect(ack.path).toBe('/jsm/v2/alerts/inc_1/acknowledge?identifierType=alias');
    expect(ack.json).toEqual({ source: 'Vigil', note: '👀 API acknowledged by Alice' });
    expect(close.path).toBe('/jsm/v2/alerts/inc_1/close?identifierType=alias');
  });

  it('a test creates then closes vigil-test-<id>', async () => {
    expect(await channelKinds.jsm.deliver(ch(), message('test'), ctx())).toEqual({ delivered: true, error: null });
    const [create, close] = await rx.waitFor(2);
    expect(create.json).toMatchObject({ alias: 'vigil-test-dlv_test', source: 'Vigil' });
    expect(close.path).toBe('/jsm/v2/alerts/vigil-test-dlv_test/close?identifierType=alias');
  });

  it('reports JSM\'s refusal without the key', async () => {
    rx.respondWith(422, { message: `Key ${GENIE_KEY} is not valid`, took: 0.001 });
    expect(await channelKinds.jsm.deliver(ch(), message(), ctx())).toEqual({ delivered: false, permanent: true, error: 'HTTP 422: Key **** is not valid' });
  });
});

describe('email', () => {
  const ch = () => channel('email', 'Ops@Example.org');
  beforeEach(() => { smtp.messages.length = 0; });

  it('sends the alert through the SMTP server', async () => {
    expect(await channelKinds.email.deliver(ch(), message(), ctx())).toEqual({ delivered: true, error: null });
    const [mail] = await smtp.waitFor(1);
    expect(mail).toMatchObject({ from: 'vigil@example.com', to: ['Ops@example.org'], subject: '[Vigil] API is down' });
    expect(mail.text).toContain('🔴 API is down: status_code 503 is not < 400');
    expect(mail.text).toContain('Incident: inc_1');
  });

  it('sends one confirmation message with the link', async () => {
    const link = 'http://vigil.test/confirm/tok_0123456789abcdefghijklmnopqrstuvwxyz-_ABCDEFGH';
    expect(await channelKinds.email.sendConfirmation!(ch(), link, ctx())).toEqual({ delivered: true, error: null });
    const mails = await smtp.waitFor(1);
    expect(mails).toHaveLength(1);
    expect(mails[0].text).toContain(`Confirm that alerts from Vigil may be sent to this address: ${link}`);
  });

  it('reports the server\'s refusal; 5xx is permanent, 4xx is not', async () => {
    smtp.rejectNext('550 5.1.1 mailbox unavailable');
    expect(await channelKinds.email.deliver(ch(), message(), ctx()))
      .toEqual({ delivered: false, permanent: true, error: 'SMTP RCPT TO refused: 550 5.1.1 mailbox unavailable' });
    smtp.rejectNext('451 4.3.0 try again later');
    expect(await channelKinds.email.deliver(ch(), message(), ctx())).toEqual({ delivered: false, error: 'SMTP RCPT TO refused: 451 4.3.0 try again later' });
    expect(smtp.messages).toHaveLength(0);
  });

  it('without a server, or an unreachable one, says so (no password shown)', async () => {
    expect(await channelKinds.email.deliver(ch(), message(), ctx({ providers: { smtpUrl: null } })))
      .toEqual({ delivered: false, error: 'no SMTP server is configured (SMTP_URL)' });
    const res = await channelKinds.email.deliver(ch(), message(), ctx({ providers: { smtpUrl: 'smtp://mailer:hunter22@127.0.0.1:1' } }));
    expect(res).toEqual({ delivered: false, error: 'could not reach the SMTP server: connection refused (127.0.0.1:1)' });
  });

  it('gives up when the server never answers', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const mute = net.createServer((s) => { sockets.add(s); }); // accepts, never greets
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    try {
      const smtpUrl = `smtp://127.0.0.1:${(mute.address() as AddressInfo).port}`;
      const res = await channelKinds.email.deliver(ch(), message(), ctx({ providers: { smtpUrl }, signal: AbortSignal.timeout(200) }));
      expect(res).toEqual({ delivered: false, error: expect.stringMatching(/^timed out after 0\.[1-3] s$/) });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => mute.close(r));
    }
  });

  it('the operator\'s SMTP server is reachable even when private addresses are not', async () => {
    expect(await channelKinds.email.deliver(ch(), message(), ctx({ net: { allowPrivate: false } }))).toEqual({ delivered: true, error: null });
  });
});

describe('receivers', () => {
  it('waitFor rejects when too few requests arrive', async () => {
    await expect(rx.waitFor(1, 50)).rejects.toThrow('expected 1 requests within 50 ms, got 0');
  });
});
