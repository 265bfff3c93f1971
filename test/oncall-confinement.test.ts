/**
 * On-call seen through workspace confinement (issue 24, items 3 and 4; spec,
 * Authentication §3: for a confined key "anything outside does not exist"),
 * black-box over HTTP:
 * - GET /on-call to a ws1 key carries no id or name of ws2's schedules,
 *   channels, overrides or policies; deleting monitors never widens which
 *   policies it sees;
 * - a ws1 incident's escalation reaches only channels ws1 may use (ws1's own,
 *   organisation-wide), never the on-call person's ws2 webhook, and the
 *   timeline the ws1 key reads names nothing of ws2;
 * - deletes (and covers) of ws2 objects answer exactly like made-up ids;
 * - a confined caller's refusals of organisation-wide changes name the
 *   operation's permission.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { routes } from '../gen/routes';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startHttpReceiver, type HttpReceiver } from './support/receivers';
import { newId } from '../src/crypto/ids';

const HOUR = 3_600_000;
let srv: TestServer;
let receiver: HttpReceiver;
let target: http.Server;
let targetUrl: string;
/** Paths of `target` that answer 500 (a monitor checking one goes down); every other path answers 200. */
const failing = new Set<string>();
let org: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let owner: ApiClient;
/** A ws1-confined member's key: the reader whose view is under test. */
let ws1Key: ApiClient;
let ws1: string;
let ws2: string;
/** The on-call person: an unconfined member owning channels in ws1, ws2 and the whole organisation. */
let paula: { userId: string; membershipId: string; apiKey: string };

/** The `x-permission` openapi.yaml gives an operation: what a 403 of it must name. */
function xPermission(operationId: string): string | null | undefined {
  return routes.find((r) => r.operationId === operationId)?.permission;
}

const at = (h: number) => new Date(Date.now() + h * HOUR).toISOString();
/** A hand-over time 12 hours away, so that nothing hands over while a test runs. */
const handoffIn12h = () => at(12).slice(11, 16);
const unique = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

async function schedule(api: ApiClient, name: string, workspaceId: string | null, participantIds: string[]) {
  return ok('createSchedule', await api.post('/on-call/schedules', {
    name, shiftLengthHours: 24, handoffTime: handoffIn12h(), participantIds, ...(workspaceId ? { workspaceId } : {}),
  }), 201);
}

async function monitor(workspaceId: string, path = 'up') {
  return ok('createMonitor', await owner.post('/monitors', {
    name: unique('mon'), kind: 'http', workspaceId, config: JSON.stringify({ url: `${targetUrl}/${path}`, timeoutSeconds: 5 }),
  }), 201).id as string;
}

/** Makes monitor `m` (checking `/<path>`) fail from now on and has it checked until its incident opens; the incident's id. */
async function failUntilIncident(m: string, path: string): Promise<string> {
  failing.add(`/${path}`);
  return until(`an incident of ${m}`, async () => {
    const row = await srv.db.selectFrom('incidents').select('id').where('monitor_id', '=', m).executeTakeFirst();
    if (row) return row.id;
    // Due again at once: a check under way when the path began to fail saw it up and put the next one minutes away.
    await srv.db.updateTable('monitor_schedule').set({ next_due_at: new Date(Date.now() - 1000) }).where('monitor_id', '=', m).where('next_due_at', '>', new Date()).execute();
    return null;
  }, 30_000);
}

async function webhook(api: ApiClient, name: string, workspaceId: string | null, path: string) {
  return ok('createChannel', await api.post('/channels', { kind: 'webhook', name, target: `${receiver.url}/${path}`, workspaceId }), 201) as { id: string; name: string };
}

async function policy(body: Record<string, unknown>) {
  return ok('createEscalationPolicy', await owner.post('/on-call/escalation-policies', body), 201) as { id: string; name: string };
}

const onCallBody = async (api: ApiClient) => {
  const res = await api.get('/on-call');
  ok('getOnCall', res);
  return JSON.stringify(res.body);
};

/** Every needle that appears in `haystack` (expected: none). */
const found = (haystack: string, needles: string[]) => needles.filter((n) => haystack.includes(n));

/** Answers of two requests, compared whole: status and body. */
const answer = (res: { status: number; body: unknown }) => ({ status: res.status, body: res.body });

beforeAll(async () => {
  receiver = await startHttpReceiver();
  target = http.createServer((req, res) => { res.statusCode = failing.has(req.url ?? '') ? 500 : 200; res.end('x'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  srv = await startTestServer({ WORKER: 'true', MASTER_KEY: randomBytes(32).toString('base64'), RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await srv.org({ plan: 'enterprise' });
  owner = srv.api(org.apiKey);
  ws1 = org.workspaceId;
  ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: unique('Client two') }), 201).id;
  ws1Key = srv.api((await srv.member(org.organizationId, 'member', [ws1])).apiKey);
  paula = await srv.member(org.organizationId, 'member');
});
afterAll(async () => {
  await srv.close();
  await receiver.close();
  await new Promise((r) => target.close(r));
});

describe('GET /on-call through a ws1 key', () => {
  it('carries no id or name of ws2 schedules, channels, overrides or policies; steps aimed there are left out', async () => {
    const s1 = await schedule(owner, unique('ws1-sched'), ws1, [paula.userId]);
    const s2 = await schedule(owner, unique('ws2-sched'), ws2, [paula.userId]);
    const c1 = await webhook(owner, unique('ws1-hook'), ws1, 'ignored');
    const c2 = await webhook(owner, unique('ws2-hook'), ws2, 'ignored');
    const o2 = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s2.id, userId: paula.userId, startsAt: at(-1), endsAt: at(1) }), 201);
    const m1 = await monitor(ws1);
    const m2 = await monitor(ws2);
    const steps = (...t: [string, string][]) => t.map(([targetType, targetId], i) => ({ afterMinutes: i * 5, targetType, targetId }));
    // Escalates a ws1 monitor, partly through ws2's schedule and channel.
    const p1 = await policy({ name: unique('ws1-policy'), monitorIds: [m1], steps: steps(['schedule', s2.id], ['schedule', s1.id], ['channel', c2.id], ['channel', c1.id], ['user', paula.userId]) });
    const p2 = await policy({ name: unique('ws2-policy'), monitorIds: [m2], steps: steps(['schedule', s2.id], ['channel', c2.id]) });
    const mixed = await policy({ name: unique('mixed-policy'), monitorIds: [await monitor(ws1), await monitor(ws2)], steps: steps(['schedule', s1.id]) });
    const unbound = await policy({ name: unique('unbound-policy'), steps: steps(['schedule', s1.id]) });

    const body = await onCallBody(ws1Key);
    const ws2Things = [ws2, s2.id, s2.name, c2.id, c2.name, o2.id, p2.id, p2.name, m2, mixed.id, mixed.name, unbound.id, unbound.name];
    expect(found(body, ws2Things)).toEqual([]);
    const mine = JSON.parse(body).data.escalationPolicies.find((p: { id: string }) => p.id === p1.id);
    expect(mine.steps).toEqual([
      { afterMinutes: 5, targetType: 'schedule', targetId: s1.id, targetName: s1.name },
      { afterMinutes: 15, targetType: 'channel', targetId: c1.id, targetName: c1.name },
      { afterMinutes: 20, targetType: 'user', targetId: paula.userId, targetName: expect.stringMatching(/@example\.test$/) },
    ]);
    expect(mine.monitorIds).toEqual([m1]);
    // The whole organisation's view still has every step and every policy.
    const all = await onCallBody(owner);
    expect(found(all, [p1.id, p2.id, mixed.id, unbound.id, s2.id, c2.id, o2.id])).toHaveLength(7);
    expect(JSON.parse(all).data.escalationPolicies.find((p: { id: string }) => p.id === p1.id).steps).toHaveLength(5);
  });

  it('deleting monitors never widens the policies a confined key sees', async () => {
    const s = await schedule(owner, unique('sched'), null, [paula.userId]);
    const step = [{ afterMinutes: 0, targetType: 'schedule', targetId: s.id }];
    const onlyWs2 = await monitor(ws2);
    const mixedWs1 = await monitor(ws1);
    const mixedWs2 = await monitor(ws2);
    const own = await monitor(ws1);
    const gone = await policy({ name: unique('all-deleted'), monitorIds: [onlyWs2], steps: step });
    const mixed = await policy({ name: unique('mixed'), monitorIds: [mixedWs1, mixedWs2], steps: step });
    const mine = await policy({ name: unique('mine'), monitorIds: [own], steps: step });
    expect(found(await onCallBody(ws1Key), [gone.id, mixed.id, mine.id])).toEqual([mine.id]);
    for (const m of [onlyWs2, mixedWs2]) ok('deleteMonitor', await owner.delete(`/monitors/${m}`));
    // A monitor that is gone counts as outside: its workspace is no longer known.
    const after = await onCallBody(ws1Key);
    expect(found(after, [gone.id, gone.name, mixed.id, mixed.name])).toEqual([]);
    for (const id of [gone.id, mixed.id]) {
      expect(answer(await ws1Key.delete(`/on-call/escalation-policies/${id}`))).toEqual(answer(await ws1Key.delete('/on-call/escalation-policies/esc_madeup')));
    }
    // Deleting its own monitor narrows what the key sees; the organisation still sees all three.
    ok('deleteMonitor', await owner.delete(`/monitors/${own}`));
    expect(found(await onCallBody(ws1Key), [mine.id])).toEqual([]);
    expect(found(await onCallBody(owner), [gone.id, mixed.id, mine.id])).toHaveLength(3);
  });
});

describe('escalation of a ws1 incident', () => {
  it('reaches the on-call person\'s ws1 and organisation-wide channels, never their ws2 webhook; the ws1 timeline names nothing of ws2', async () => {
    const paulaApi = srv.api(paula.apiKey);
    const inWs1 = await webhook(paulaApi, unique('paula-ws1'), ws1, 'paula-ws1');
    const orgWide = await webhook(paulaApi, unique('paula-org'), null, 'paula-org');
    const inWs2 = await webhook(paulaApi, unique('paula-ws2'), ws2, 'paula-ws2');
    const sharedWs2 = await webhook(owner, unique('shared-ws2'), ws2, 'shared-ws2');
    const s = await schedule(owner, unique('ws1-night'), ws1, [paula.userId]);
    const path = unique('down');
    const m = await monitor(ws1, path);
    await policy({
      name: unique('wake-paula'), monitorIds: [m], steps: [
        { afterMinutes: 0, targetType: 'schedule', targetId: s.id },
        // A step naming another workspace's channel outright pages nobody either.
        { afterMinutes: 0, targetType: 'channel', targetId: sharedWs2.id },
      ],
    });
    // Only now does the monitor fail: the policy is in place when its incident opens.
    const incidentId = await failUntilIncident(m, path);
    const paths = () => receiver.requests.filter((r) => r.json?.event === 'incident.escalated' && r.json?.incident?.id === incidentId).map((r) => r.path).sort();
    await until('both escalation deliveries', async () => paths().length >= 2, 30_000);
    const timeline = await until('two notification entries', async () => {
      const res = await ws1Key.get(`/incidents/${incidentId}/events`);
      const events = ok('listIncidentEvents', res);
      return events.filter((e: { kind: string }) => e.kind === 'notification').length >= 2 ? JSON.stringify(res.body) : null;
    }, 30_000);
    // Let any stray delivery land before looking for it.
    await new Promise((r) => setTimeout(r, 1500));
    expect(paths()).toEqual(['/paula-org', '/paula-ws1']);
    const queued = await srv.db.selectFrom('deliveries').select('channel_id').where('incident_id', '=', incidentId).execute();
    expect(queued.map((d) => d.channel_id).sort()).toEqual([inWs1.id, orgWide.id].sort());
    expect(found(timeline, [inWs1.name, orgWide.name])).toEqual([inWs1.name, orgWide.name]);
    expect(found(timeline, [ws2, inWs2.id, inWs2.name, sharedWs2.id, sharedWs2.name])).toEqual([]);
  }, 90_000);
});

describe('follow-ups of a ws1 incident', () => {
  it('an acknowledgement goes only where the incident\'s workspace may send: a ws2 delivery stored earlier gets nothing', async () => {
    const inWs1 = await webhook(owner, unique('ack-ws1'), ws1, 'ack-ws1');
    const inWs2 = await webhook(owner, unique('ack-ws2'), ws2, 'ack-ws2');
    const path = unique('down');
    const m = await monitor(ws1, path);
    ok('setMonitorChannels', await owner.put(`/monitors/${m}/channels`, { channelIds: [inWs1.id] }));
    const incidentId = await failUntilIncident(m, path);
    const events = (p: string) => receiver.requests.filter((r) => r.path === p && r.json?.incident?.id === incidentId).map((r) => r.json.event);
    await until('the opening', async () => events('/ack-ws1').includes('incident.opened'), 30_000);
    // As an escalation made before the rule would have left it.
    await srv.db.insertInto('deliveries').values({
      id: newId('dlv'), organization_id: org.organizationId, channel_id: inWs2.id, incident_id: incidentId, event: 'incident.escalated', status: 'delivered',
    }).execute();
    ok('updateIncident', await owner.patch(`/incidents/${incidentId}`, { status: 'acknowledged' }));
    await until('the acknowledgement', async () => events('/ack-ws1').includes('incident.acknowledged'), 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(events('/ack-ws2')).toEqual([]);
    const queued = await srv.db.selectFrom('deliveries').select('channel_id').where('incident_id', '=', incidentId).where('event', '=', 'incident.acknowledged').execute();
    expect(queued.map((d) => d.channel_id)).toEqual([inWs1.id]);
  }, 90_000);
});

describe('deletes and covers of ws2 objects answer like made-up ids', () => {
  it('schedules, overrides, escalation policies', async () => {
    const s2 = await schedule(owner, unique('ws2-sched'), ws2, [paula.userId]);
    const o2 = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s2.id, userId: paula.userId, startsAt: at(-1), endsAt: at(1) }), 201);
    const p2 = await policy({ name: unique('ws2-policy'), monitorIds: [await monitor(ws2)], steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: s2.id }] });
    const c2 = await webhook(owner, unique('ws2-hook'), ws2, 'ignored');
    const pairs: [string, string][] = [
      [`/on-call/schedules/${s2.id}`, '/on-call/schedules/sch_madeup'],
      [`/on-call/overrides/${o2.id}`, '/on-call/overrides/ovr_madeup'],
      [`/on-call/escalation-policies/${p2.id}`, '/on-call/escalation-policies/esc_madeup'],
    ];
    for (const [outside, madeUp] of pairs) {
      const a = answer(await ws1Key.delete(outside));
      expect(a.status).toBe(404);
      expect(a).toEqual(answer(await ws1Key.delete(madeUp)));
    }
    const cover = (scheduleId: string) => ws1Key.post('/on-call/overrides', { scheduleId, userId: paula.userId, startsAt: at(0), endsAt: at(1) });
    expect(answer(await cover(s2.id))).toEqual(answer(await cover('sch_madeup')));
    const m1 = await monitor(ws1);
    const aim = (targetType: string, targetId: string) => ws1Key.post('/on-call/escalation-policies', { name: 'x', monitorIds: [m1], steps: [{ afterMinutes: 0, targetType, targetId }] });
    for (const [targetType, outside, madeUp] of [['schedule', s2.id, 'sch_madeup'], ['channel', c2.id, 'ch_madeup']]) {
      const a = answer(await aim(targetType, outside));
      expect(a.status).toBe(404);
      expect(a).toEqual(answer(await aim(targetType, madeUp)));
    }
    // Nothing was deleted.
    expect(found(await onCallBody(owner), [s2.id, o2.id, p2.id])).toHaveLength(3);
  });
});

describe('a confined caller and organisation-wide on-call', () => {
  it('is refused with 403 workspace_confined naming the operation\'s permission', async () => {
    const orgWide = await schedule(owner, unique('org-sched'), null, [paula.userId]);
    const ov = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: orgWide.id, userId: paula.userId, startsAt: at(-1), endsAt: at(1) }), 201);
    const m1 = await monitor(ws1);
    const refusals: [string, { status: number; body: any }][] = [
      ['createSchedule', await ws1Key.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [paula.userId] })],
      ['deleteSchedule', await ws1Key.delete(`/on-call/schedules/${orgWide.id}`)],
      ['createOverride', await ws1Key.post('/on-call/overrides', { scheduleId: orgWide.id, userId: paula.userId, startsAt: at(0), endsAt: at(1) })],
      ['deleteOverride', await ws1Key.delete(`/on-call/overrides/${ov.id}`)],
      // A policy naming no monitor belongs to no workspace: the whole organisation's.
      ['createEscalationPolicy', await ws1Key.post('/on-call/escalation-policies', { name: 'x', steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: orgWide.id }] })],
    ];
    for (const [op, res] of refusals) {
      expect({ op, status: res.status, code: res.body.code, permission: res.body.vars?.permission })
        .toEqual({ op, status: 403, code: 'workspace_confined', permission: xPermission(op) });
    }
    // Inside its workspace the same key may do all of it.
    const mine = await schedule(ws1Key, unique('ws1-own'), ws1, [paula.userId]);
    const myCover = ok('createOverride', await ws1Key.post('/on-call/overrides', { scheduleId: mine.id, userId: paula.userId, startsAt: at(0), endsAt: at(1) }), 201);
    const p = ok('createEscalationPolicy', await ws1Key.post('/on-call/escalation-policies', { name: 'own', monitorIds: [m1], steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: orgWide.id }] }), 201);
    ok('deleteOverride', await ws1Key.delete(`/on-call/overrides/${myCover.id}`));
    ok('deleteEscalationPolicy', await ws1Key.delete(`/on-call/escalation-policies/${p.id}`));
    ok('deleteSchedule', await ws1Key.delete(`/on-call/schedules/${mine.id}`));
  });
});
