import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { startServer } from '../src/server';
import { verifyWebhookSignature } from '../src/alerting/channels/webhook';
import { ok, until } from './support/expect';
import { makeDue } from './support/monitors';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';
import { tempDir } from './support/child';

// An incident reaches a person, and only when it should: webhook deliveries on
// open, acknowledge and resolve, retried until they land, kept across a
// restart; nothing for suppressed incidents or during maintenance.

const MASTER_KEY = randomBytes(32).toString('base64');
let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let receiver: HttpReceiver;
let target: http.Server;
let targetUrl: string;
let targetStatus = 200;

async function checkNow(id: string) {
  const before = (await server.db.selectFrom('monitors').select('last_checked_at').where('id', '=', id).executeTakeFirstOrThrow()).last_checked_at;
  await makeDue(server.db, [id]);
  await until(`a check of ${id}`, async () => {
    const row = await server.db.selectFrom('monitors').select('last_checked_at').where('id', '=', id).executeTakeFirstOrThrow();
    return row.last_checked_at && (!before || row.last_checked_at > before);
  });
  return ok('getMonitor', await api.get(`/monitors/${id}`));
}

async function monitorWithWebhook(name: string, extra: Record<string, unknown> = {}) {
  const id = ok('createMonitor', await api.post('/monitors', { name, kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: `${targetUrl}/${name}`, timeoutSeconds: 5 }), ...extra }), 201).id;
  const channel = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: `${name} hook`, target: `${receiver.url}/${name}`, workspaceId: org.workspaceId }), 201);
  ok('setMonitorChannels', await api.put(`/monitors/${id}/channels`, { channelIds: [channel.id] }));
  await checkNow(id);
  return { id, secret: channel.secret as string, channelId: channel.id as string };
}

const events = (name: string) => receiver.requests.filter((r) => r.path === `/${name}`).map((r) => r.json.event);

beforeAll(async () => {
  receiver = await startHttpReceiver();
  target = http.createServer((req, res) => { res.statusCode = targetStatus; res.end('x'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', MASTER_KEY, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await receiver.close();
  await new Promise((r) => target.close(r));
});
beforeEach(() => { targetStatus = 200; receiver.respondWith(200); });

test('open, acknowledge and resolve reach the webhook, signed; each delivery is on the timeline', async () => {
  const { id, secret } = await monitorWithWebhook('api');
  targetStatus = 500;
  const down = await checkNow(id);
  const [opened] = await receiver.waitFor(1);
  expect(opened.json).toMatchObject({ event: 'incident.opened', incident: { id: down.openIncidentId, monitorId: id, status: 'open', severity: 'critical' } });
  expect(verifyWebhookSignature(secret, opened.body, opened.headers['vigil-signature'])).toBe(true);
  ok('updateIncident', await api.patch(`/incidents/${down.openIncidentId}`, { status: 'acknowledged' }));
  await until('the acknowledgement', async () => events('api').includes('incident.acknowledged'));
  targetStatus = 200;
  await checkNow(id);
  await until('the resolution', async () => events('api').includes('incident.resolved'));
  expect(events('api')).toEqual(['incident.opened', 'incident.acknowledged', 'incident.resolved']);
  const timeline = await until('notification entries', async () => {
    const t = ok('listIncidentEvents', await api.get(`/incidents/${down.openIncidentId}/events`));
    return t.filter((e: { kind: string }) => e.kind === 'notification').length === 3 ? t : null;
  });
  expect(timeline.map((e: { kind: string }) => e.kind)).toEqual(expect.arrayContaining(['opened', 'acknowledged', 'resolved', 'notification']));
});

test('a failed delivery is retried until it lands, every attempt recorded', async () => {
  const { id } = await monitorWithWebhook('flaky');
  receiver.respondWith(503, { error: 'busy' });
  targetStatus = 500;
  const down = await checkNow(id);
  await until('a first failed attempt', async () => receiver.requests.some((r) => r.path === '/flaky'));
  receiver.respondWith(200);
  const delivery = await until('the retried delivery', async () => {
    const d = await server.db.selectFrom('deliveries').selectAll().where('incident_id', '=', down.openIncidentId).executeTakeFirst();
    return d?.status === 'delivered' ? d : null;
  }, 20_000);
  expect(delivery.attempts).toBeGreaterThanOrEqual(2);
  const attempts = await server.db.selectFrom('delivery_attempts').select(['ok', 'error']).where('delivery_id', '=', delivery.id).orderBy('seq').execute();
  expect(attempts[0]).toMatchObject({ ok: false, error: expect.stringContaining('503') });
  expect(attempts.at(-1)!.ok).toBe(true);
}, 40_000);

test('a suppressed incident (its dependency is down) pages nobody', async () => {
  const parent = await monitorWithWebhook('parent');
  const child = await monitorWithWebhook('child', { dependsOn: [parent.id] });
  targetStatus = 500;
  await checkNow(parent.id);
  await receiver.waitFor(receiver.requests.length);
  const c = await checkNow(child.id);
  expect(ok('getIncident', await api.get(`/incidents/${c.openIncidentId}`)).status).toBe('suppressed');
  await until('the parent alert', async () => events('parent').includes('incident.opened'));
  await new Promise((r) => setTimeout(r, 1500));
  expect(events('child')).toEqual([]);
});

test('alerts queued while no worker runs are delivered after a restart', async () => {
  const { id } = await monitorWithWebhook('restart');
  // An API-only process acknowledges an incident: the job waits in the queue.
  targetStatus = 500;
  const down = await checkNow(id);
  await until('the opening', async () => events('restart').includes('incident.opened'));
  const dir = tempDir('vigil-api-only-');
  const apiOnly = await startServer(loadConfig({ DATABASE_URL: server.databaseUrl, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER: 'false', MASTER_KEY, RATE_LIMIT_WRITE: '100000' }), createLogger('silent'));
  try {
    const res = await fetch(`${apiOnly.url}/api/v1/incidents/${down.openIncidentId}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'acknowledged' }),
    });
    expect(res.status).toBe(200);
  } finally {
    await apiOnly.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // The running worker (this test's server) picks the queued job up.
  await until('the acknowledgement', async () => events('restart').includes('incident.acknowledged'));
});

test('during a maintenance window nothing pages; with keepChecking false nothing is checked', async () => {
  const quiet = await monitorWithWebhook('quiet');
  const paused = await monitorWithWebhook('nocheck');
  const now = Date.now();
  for (const [m, keepChecking] of [[quiet.id, true], [paused.id, false]] as const) {
    ok('createMaintenanceWindow', await api.post('/maintenance', {
      title: 'Upgrade', workspaceId: org.workspaceId, monitorIds: [m], keepChecking,
      startsAt: new Date(now - 60_000).toISOString(), endsAt: new Date(now + 3_600_000).toISOString(), timezone: 'UTC',
    }), 201);
  }
  targetStatus = 500;
  const q = await checkNow(quiet.id);
  expect(q.status).toBe('down');
  expect(q.openIncidentId).not.toBeNull();
  const lastChecked = (await api.get(`/monitors/${paused.id}`)).body.data.lastCheckedAt;
  await makeDue(server.db, [paused.id]);
  await new Promise((r) => setTimeout(r, 1500));
  expect((await api.get(`/monitors/${paused.id}`)).body.data.lastCheckedAt).toBe(lastChecked);
  expect(events('quiet')).toEqual([]);
});

test('escalation: an unacknowledged incident climbs the policy; acknowledging stops it', async () => {
  const { id } = await monitorWithWebhook('escalating');
  const pager = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'pager', target: `${receiver.url}/pager`, workspaceId: null }), 201);
  ok('createEscalationPolicy', await api.post('/on-call/escalation-policies', {
    name: 'Wake someone', repeat: 1, monitorIds: [id], steps: [{ afterMinutes: 0, targetType: 'channel', targetId: pager.id }],
  }), 201);
  targetStatus = 500;
  const down = await checkNow(id);
  await until('the escalation step', async () => events('pager').includes('incident.escalated'));
  const timeline = ok('listIncidentEvents', await api.get(`/incidents/${down.openIncidentId}/events`));
  expect(timeline.map((e: { kind: string }) => e.kind)).toContain('escalation');
  ok('updateIncident', await api.patch(`/incidents/${down.openIncidentId}`, { status: 'acknowledged' }));
  // The second round would fire five minutes later; once acknowledged it never does.
  const { escalateTask } = await import('../src/alerting/escalation.js');
  await escalateTask(server.db)({ incidentId: down.openIncidentId, n: 1 });
  expect(events('pager').filter((e) => e === 'incident.escalated')).toHaveLength(1);
});

test('an unconfirmed e-mail channel gets nothing but its confirmation message', async () => {
  const { id } = await monitorWithWebhook('mailbox');
  const mail = ok('createChannel', await api.post('/channels', { kind: 'email', name: 'ops mail', target: 'ops@example.test', workspaceId: org.workspaceId }), 201);
  expect(mail.confirmed).toBe(false);
  const hook = ok('listMonitorChannels', await api.get(`/monitors/${id}/channels`))[0].id;
  ok('setMonitorChannels', await api.put(`/monitors/${id}/channels`, { channelIds: [hook, mail.id] }));
  targetStatus = 500;
  const down = await checkNow(id);
  await until('the webhook alert', async () => events('mailbox').includes('incident.opened'));
  const deliveries = await server.db.selectFrom('deliveries').select('channel_id').where('incident_id', '=', down.openIncidentId).execute();
  expect(deliveries.map((d) => d.channel_id)).toEqual([hook]);
});
