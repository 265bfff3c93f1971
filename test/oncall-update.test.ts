/**
 * PATCH /on-call/schedules/{id} and PATCH /on-call/escalation-policies/{id}:
 * changed in place over REST and Connect, each field checked as on create
 * (same codes and details.field), overrides kept, a changed rotation
 * restarted from the change, the confinement rules of the deletes, audit
 * entries.
 */
import { routes } from '../gen/routes';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { connectCall } from './support/wire-call';

let srv: TestServer;
let o: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let owner: ApiClient;
let alice: { userId: string };
let bob: { userId: string };
let carol: { userId: string };
let other: ApiClient;
let otherUser: string;
let wsB: string;
let monA: string[];
let monB: string;

const HOUR = 3_600_000;
const handoffIn12h = () => new Date(Date.now() + 12 * HOUR).toISOString().slice(11, 16);
const route = (op: string) => routes.find((r) => r.operationId === op)!;

function fails(res: ApiResponse, status: number, code: string, field?: string) {
  expect({ status: res.status, code: res.body?.code, field: res.body?.details?.field }).toEqual({ status, code, field });
}

async function schedule(api: ApiClient, body: Record<string, unknown> = {}) {
  return ok('createSchedule', await api.post('/on-call/schedules', {
    name: 'Primary', shiftLengthHours: 24, handoffTime: handoffIn12h(), participantIds: [alice.userId, bob.userId], ...body,
  }), 201);
}

async function policy(api: ApiClient, body: Record<string, unknown>) {
  return ok('createEscalationPolicy', await api.post('/on-call/escalation-policies', { name: 'Escalate', ...body }), 201);
}

async function monitor(api: ApiClient, workspaceId: string) {
  return ok('createMonitor', await api.post('/monitors', { name: 'Site', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://example.test/' }) }), 201).id as string;
}

const onCall = async (api = owner) => ok('getOnCall', await api.get('/on-call'));
const audits = async (id: string) => (ok('listAuditEntries', await owner.get('/audit?limit=200')) as any[]).filter((e) => e.resourceId === id);

beforeAll(async () => {
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', WORKER: 'false' });
  o = await srv.org({ plan: 'business' });
  owner = srv.api(o.apiKey);
  alice = await srv.member(o.organizationId, 'member');
  bob = await srv.member(o.organizationId, 'member');
  carol = await srv.member(o.organizationId, 'member');
  wsB = ok('createWorkspace', await owner.post('/workspaces', { name: 'B' }), 201).id;
  monA = [await monitor(owner, o.workspaceId), await monitor(owner, o.workspaceId)];
  monB = await monitor(owner, wsB);
  const p = await srv.org({ plan: 'business' });
  other = srv.api(p.apiKey);
  otherUser = p.userId;
});
afterAll(() => srv.close());

describe('PATCH /on-call/schedules/{id}', () => {
  it('renames without touching the rotation; keeps the id and the overrides; audits oncall.schedule_updated', async () => {
    const s = await schedule(owner, { workspaceId: o.workspaceId });
    const cover = ok('createOverride', await owner.post('/on-call/overrides', {
      scheduleId: s.id, userId: carol.userId, startsAt: new Date(Date.now() + 48 * HOUR).toISOString(), endsAt: new Date(Date.now() + 50 * HOUR).toISOString(),
    }), 201);
    const before = (await onCall()).onCallNow.find((x: any) => x.scheduleId === s.id);
    const res = ok('updateSchedule', await owner.patch(`/on-call/schedules/${s.id}`, { name: '  Web team  ' }));
    expect(res).toEqual({ ...s, name: 'Web team' });
    const data = await onCall();
    expect(data.onCallNow.find((x: any) => x.scheduleId === s.id)).toEqual(before);
    expect(data.overrides.map((x: any) => x.id)).toContain(cover.id);
    const [entry] = (await audits(s.id)).filter((e) => e.action === 'oncall.schedule_updated');
    expect(entry).toMatchObject({ changes: { name: { from: 'Primary', to: 'Web team' } }, workspaceId: o.workspaceId });
  });

  it('a changed rotation restarts from the change with the first participant', async () => {
    const s = await schedule(owner);
    expect((await onCall()).onCallNow.find((x: any) => x.scheduleId === s.id).user.userId).toBe(alice.userId);
    const handoffTime = new Date(Date.now() + 11 * HOUR).toISOString().slice(11, 16);
    const res = ok('updateSchedule', await owner.patch(`/on-call/schedules/${s.id}`, {
      participantIds: [carol.userId, alice.userId], shiftLengthHours: 48, timezone: 'Europe/Berlin', handoffTime,
    }));
    expect(res).toMatchObject({ id: s.id, shiftLengthHours: 48, timezone: 'Europe/Berlin', handoffTime });
    expect(res.participants.map((p: any) => p.userId)).toEqual([carol.userId, alice.userId]);
    const now = (await onCall()).onCallNow.find((x: any) => x.scheduleId === s.id);
    expect(now).toMatchObject({ viaOverride: false, user: { userId: carol.userId } });
    const until = new Date(now.until).getTime() - Date.now();
    expect(until).toBeGreaterThan(0);
    expect(until).toBeLessThanOrEqual(48 * HOUR);
    const [entry] = (await audits(s.id)).filter((e) => e.action === 'oncall.schedule_updated');
    expect(Object.keys(entry.changes).sort()).toEqual(['handoffTime', 'participantIds', 'shiftLengthHours', 'timezone']);
    expect(entry.changes.participantIds).toEqual({ from: [alice.userId, bob.userId], to: [carol.userId, alice.userId] });
  });

  it('checks each field as create does, with the same code and details.field; an empty change and a workspace move are 400', async () => {
    const s = await schedule(owner);
    const same = async (body: Record<string, unknown>, status: number, code: string, field: string) => {
      fails(await owner.patch(`/on-call/schedules/${s.id}`, body), status, code, field);
      fails(await owner.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId], ...body }), status, code, field);
    };
    await same({ name: ' ' }, 400, 'invalid_field', 'name');
    await same({ timezone: 'Moon/Base' }, 400, 'invalid_field', 'timezone');
    await same({ handoffTime: '25:00' }, 400, 'invalid_field', 'handoffTime');
    await same({ shiftLengthHours: 0 }, 400, 'invalid_field', 'shiftLengthHours');
    await same({ participantIds: [] }, 400, 'invalid_field', 'participantIds');
    await same({ participantIds: [alice.userId, otherUser] }, 404, 'not_found', 'participantIds.1');
    expect((await owner.patch(`/on-call/schedules/${s.id}`, {})).status).toBe(400);
    expect((await owner.patch(`/on-call/schedules/${s.id}`, { workspaceId: wsB })).status).toBe(400);
    expect((await onCall()).schedules.find((x: any) => x.id === s.id)).toEqual(s);
  });

  it('a viewer is refused; foreign, made-up and out-of-confinement ids answer alike; a confined key may not change an organisation-wide schedule', async () => {
    const orgWide = await schedule(owner);
    const inA = await schedule(owner, { workspaceId: o.workspaceId });
    const viewer = srv.api((await srv.member(o.organizationId, 'viewer')).apiKey);
    const refused = await viewer.patch(`/on-call/schedules/${inA.id}`, { name: 'x' });
    fails(refused, 403, 'forbidden');
    expect(refused.body.vars.permission).toBe('notification_channel:manage');
    const made = await owner.patch('/on-call/schedules/sch_doesnotexist00000000', { name: 'x' });
    fails(made, 404, 'not_found', 'id');
    const confined = srv.api((await srv.member(o.organizationId, 'admin', [wsB])).apiKey);
    for (const r of [await other.patch(`/on-call/schedules/${inA.id}`, { name: 'x' }), await confined.patch(`/on-call/schedules/${inA.id}`, { name: 'x' })]) {
      expect({ status: r.status, body: r.body }).toEqual({ status: made.status, body: made.body });
    }
    const wide = await confined.patch(`/on-call/schedules/${orgWide.id}`, { name: 'x' });
    fails(wide, 403, 'workspace_confined');
    expect(wide.body.vars.permission).toBe('notification_channel:manage');
    const mine = await schedule(confined, { workspaceId: wsB });
    expect(ok('updateSchedule', await confined.patch(`/on-call/schedules/${mine.id}`, { name: 'B team' })).name).toBe('B team');
    const names = (await onCall()).schedules.filter((x: any) => [orgWide.id, inA.id].includes(x.id)).map((x: any) => x.name);
    expect(names).toEqual(['Primary', 'Primary']);
  });

  it('over Connect (JSON and binary): absent fields are kept, refusals carry the same code and field', async () => {
    const s = await schedule(owner);
    const r = route('updateSchedule');
    const json = await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: s.id }, query: {}, body: { name: 'Connect' } }, false);
    expect(json.json.data).toMatchObject({ id: s.id, name: 'Connect', shiftLengthHours: 24, handoffTime: s.handoffTime });
    const bin = await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: s.id }, query: {}, body: { participantIds: [bob.userId] } }, true);
    expect(bin.json.data.participants.map((p: any) => p.userId)).toEqual([bob.userId]);
    expect(bin.json.data.name).toBe('Connect');
    const bad = await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: s.id }, query: {}, body: { handoffTime: '7:00' } }, true);
    expect({ status: bad.status, code: bad.code, field: (bad.details as any)?.field }).toEqual({ status: 400, code: 'invalid_field', field: 'handoffTime' });
  });
});

describe('PATCH /on-call/escalation-policies/{id}', () => {
  it('changes name, repeat, steps and monitors; a monitor named moves from its other policy; both are audited', async () => {
    const s = await schedule(owner);
    const p1 = await policy(owner, { monitorIds: [monA[0]], steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: s.id }] });
    const p2 = await policy(owner, { name: 'Other', monitorIds: [monA[1]], steps: [{ afterMinutes: 0, targetType: 'user', targetId: bob.userId }] });
    const res = ok('updateEscalationPolicy', await owner.patch(`/on-call/escalation-policies/${p1.id}`, {
      name: 'Night', repeat: 2, monitorIds: [monA[0], monA[1]],
      steps: [{ afterMinutes: 0, targetType: 'user', targetId: alice.userId }, { afterMinutes: 15, targetType: 'schedule', targetId: s.id }],
    }));
    expect(res).toEqual({
      id: p1.id, name: 'Night', repeat: 2, monitorIds: [monA[0], monA[1]],
      steps: [{ afterMinutes: 0, targetType: 'user', targetId: alice.userId, targetName: expect.any(String) }, { afterMinutes: 15, targetType: 'schedule', targetId: s.id, targetName: 'Primary' }],
    });
    const listed = (await onCall()).escalationPolicies;
    expect(listed.find((x: any) => x.id === p1.id)).toEqual(res);
    expect(listed.find((x: any) => x.id === p2.id).monitorIds).toEqual([]);
    const [entry] = (await audits(p1.id)).filter((e) => e.action === 'oncall.escalation_policy_updated');
    expect(Object.keys(entry.changes).sort()).toEqual(['monitorIds', 'name', 'repeat', 'steps']);
    expect((await audits(p2.id)).filter((e) => e.action === 'oncall.escalation_policy_updated')).toHaveLength(1);
    // null clears the monitors (the policy becomes the whole organisation's).
    expect(ok('updateEscalationPolicy', await owner.patch(`/on-call/escalation-policies/${p1.id}`, { monitorIds: null })).monitorIds).toEqual([]);
  });

  it('checks each field as create does, with the same code and details.field', async () => {
    const p = await policy(owner, { steps: [{ afterMinutes: 0, targetType: 'user', targetId: alice.userId }] });
    const same = async (body: Record<string, unknown>, status: number, code: string, field: string) => {
      fails(await owner.patch(`/on-call/escalation-policies/${p.id}`, body), status, code, field);
      fails(await owner.post('/on-call/escalation-policies', { name: 'x', steps: [{ afterMinutes: 0, targetType: 'user', targetId: alice.userId }], ...body }), status, code, field);
    };
    await same({ name: '  ' }, 400, 'invalid_field', 'name');
    await same({ repeat: 11 }, 400, 'invalid_field', 'repeat');
    await same({ steps: [] }, 400, 'invalid_field', 'steps');
    await same({ steps: [{ afterMinutes: 10, targetType: 'user', targetId: alice.userId }, { afterMinutes: 5, targetType: 'user', targetId: bob.userId }] }, 400, 'invalid_field', 'steps.1.afterMinutes');
    await same({ steps: [{ afterMinutes: 0, targetType: 'user', targetId: otherUser }] }, 404, 'not_found', 'steps.0.targetId');
    await same({ steps: [{ afterMinutes: 0, targetType: 'pager', targetId: alice.userId }] }, 400, 'invalid_field', 'steps.0.targetType');
    await same({ monitorIds: [monA[0], 'mon_doesnotexist0000000'] }, 404, 'not_found', 'monitorIds.1');
    expect((await owner.patch(`/on-call/escalation-policies/${p.id}`, {})).status).toBe(400);
    expect((await onCall()).escalationPolicies.find((x: any) => x.id === p.id)).toEqual(p);
  });

  it('confinement: a policy it does not see answers as a made-up id; it may not drop steps it cannot see, nor leave no monitor', async () => {
    const sB = await schedule(owner, { workspaceId: wsB });
    const sA = await schedule(owner, { workspaceId: o.workspaceId });
    const confined = srv.api((await srv.member(o.organizationId, 'admin', [wsB])).apiKey);
    const inA = await policy(owner, { monitorIds: [monA[0]], steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: sA.id }] });
    const made = await confined.patch('/on-call/escalation-policies/esc_doesnotexist00000000', { name: 'x' });
    fails(made, 404, 'not_found', 'id');
    for (const r of [await confined.patch(`/on-call/escalation-policies/${inA.id}`, { name: 'x' }), await other.patch(`/on-call/escalation-policies/${inA.id}`, { name: 'x' })]) {
      expect({ status: r.status, body: r.body }).toEqual({ status: made.status, body: made.body });
    }
    // A policy of its workspace's monitor whose second step pages another workspace's schedule: seen, with one step.
    const mixed = await policy(owner, { monitorIds: [monB], steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: sB.id }, { afterMinutes: 5, targetType: 'schedule', targetId: sA.id }] });
    const renamed = ok('updateEscalationPolicy', await confined.patch(`/on-call/escalation-policies/${mixed.id}`, { name: 'B night' }));
    expect(renamed).toMatchObject({ name: 'B night', steps: [{ targetId: sB.id }] });
    expect(renamed.steps).toHaveLength(1);
    const drop = await confined.patch(`/on-call/escalation-policies/${mixed.id}`, { steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: sB.id }] });
    fails(drop, 403, 'workspace_confined', 'steps');
    expect(drop.body.vars.permission).toBe('notification_channel:manage');
    expect(JSON.stringify(drop.body)).not.toContain(sA.id);
    fails(await confined.patch(`/on-call/escalation-policies/${mixed.id}`, { monitorIds: [] }), 403, 'workspace_confined');
    fails(await confined.patch(`/on-call/escalation-policies/${mixed.id}`, { monitorIds: [monA[0]] }), 404, 'not_found', 'monitorIds.0');
    const stored = (await onCall()).escalationPolicies.find((x: any) => x.id === mixed.id);
    expect(stored.steps.map((s: any) => s.targetId)).toEqual([sB.id, sA.id]);
    expect(stored.monitorIds).toEqual([monB]);
    // A policy whose steps it all sees: it replaces them.
    const own = await policy(confined, { monitorIds: [monB], steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: sB.id }] });
    const viewer = srv.api((await srv.member(o.organizationId, 'viewer')).apiKey);
    fails(await viewer.patch(`/on-call/escalation-policies/${own.id}`, { repeat: 1 }), 403, 'forbidden');
    expect(ok('updateEscalationPolicy', await confined.patch(`/on-call/escalation-policies/${own.id}`, {
      steps: [{ afterMinutes: 0, targetType: 'user', targetId: alice.userId }, { afterMinutes: 10, targetType: 'schedule', targetId: sB.id }],
    })).steps).toHaveLength(2);
  });

  it('over Connect (JSON and binary): absent monitors are kept, an empty list clears them', async () => {
    const p = await policy(owner, { monitorIds: [monA[0]], steps: [{ afterMinutes: 0, targetType: 'user', targetId: alice.userId }] });
    const r = route('updateEscalationPolicy');
    const bin = await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: p.id }, query: {}, body: { repeat: 3 } }, true);
    expect(bin.json.data).toMatchObject({ id: p.id, repeat: 3, monitorIds: [monA[0]] });
    // Connect JSON carries a StringList as its message ({values}); binary, by the reference encoding, from a plain array.
    const json = await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: p.id }, query: {}, body: { name: 'Cleared', monitorIds: { values: [] } } }, false);
    expect(json.status).toBe(200);
    expect(json.json.data.monitorIds ?? []).toEqual([]);
    expect(json.json.data.name).toBe('Cleared');
    await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: p.id }, query: {}, body: { monitorIds: [monA[1]] } }, true);
    const cleared = await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: p.id }, query: {}, body: { monitorIds: [] } }, true);
    expect(cleared.status).toBe(200);
    expect((await onCall()).escalationPolicies.find((x: any) => x.id === p.id).monitorIds).toEqual([]);
    const missing = await connectCall(srv.url, { route: r, token: o.apiKey, path: { id: 'esc_doesnotexist00000000' }, query: {}, body: { name: 'x' } }, true);
    expect({ status: missing.status, code: missing.code }).toEqual({ status: 404, code: 'not_found' });
  });
});
