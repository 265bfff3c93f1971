/**
 * On-call through the API: schedules, escalation policies and overrides
 * (create, list, delete), validation, who is on call now (rotation or cover),
 * unreachable people, tenancy, permissions, audit entries, and the helpers the
 * escalation runner uses (policyForMonitor, stepChannels; src/domain/oncallRunner.ts).
 */
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { addMember } from '../src/domain/organizations';
import { policyForMonitor, stepChannels } from '../src/domain/oncallRunner';
import { newId } from '../src/crypto/ids';

let srv: TestServer;
let o: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let owner: ApiClient;
let alice: { userId: string; membershipId: string };
let bob: { userId: string; membershipId: string };
let other: { organizationId: string; workspaceId: string; userId: string; apiKey: string };

const HOUR = 3_600_000;
/** A hand-over time 12 hours away, so that nothing hands over while a test runs. */
const handoffIn12h = () => new Date(Date.now() + 12 * HOUR).toISOString().slice(11, 16);

async function channel(membershipId: string | null, opts: { enabled?: boolean; confirmed?: boolean; organizationId?: string; kind?: string; workspaceId?: string } = {}) {
  const id = newId('ch');
  await srv.db.insertInto('notification_channels').values({
    id, organization_id: opts.organizationId ?? o.organizationId, workspace_id: opts.workspaceId ?? null, owner_membership_id: membershipId, kind: opts.kind ?? 'email',
    name: `Mail ${id.slice(-4)}`, target: `${id}@example.test`, enabled: opts.enabled ?? true, confirmed_at: opts.confirmed === false ? null : new Date(),
  }).execute();
  return id;
}

async function schedule(api: ApiClient, body: Record<string, unknown> = {}) {
  return ok('createSchedule', await api.post('/on-call/schedules', {
    name: 'Primary', shiftLengthHours: 24, handoffTime: handoffIn12h(), participantIds: [alice.userId, bob.userId], ...body,
  }), 201);
}

async function monitor(api: ApiClient, workspaceId: string) {
  const res = await api.post('/monitors', { name: 'Site', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://example.test/' }) });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

const onCall = async (api: ApiClient) => ok('getOnCall', await api.get('/on-call'));
const field = (res: { status: number; body: any }, status: number, name: string) => {
  expect({ status: res.status, field: res.body?.details?.field }).toEqual({ status, field: name });
};

beforeAll(async () => {
  // Mail is configured (nothing is sent here): an email channel can reach its owner; Telegram is not.
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', SMTP_URL: 'smtp://127.0.0.1:1' });
  o = await srv.org({ plan: 'business' });
  owner = srv.api(o.apiKey);
  alice = await srv.member(o.organizationId, 'member');
  bob = await srv.member(o.organizationId, 'member');
  other = await srv.org({ plan: 'business' });
});
afterAll(() => srv.close());

describe('schedules', () => {
  it('starts empty', async () => {
    const data = await srv.api((await srv.org()).apiKey).get('/on-call');
    expect(ok('getOnCall', data)).toEqual({ schedules: [], escalationPolicies: [], overrides: [], onCallNow: [], unreachable: [] });
  });

  it('creates a schedule (201, UTC by default), lists it with who is on call by the rotation, deletes it', async () => {
    const s = await schedule(owner);
    expect(s).toMatchObject({ name: 'Primary', timezone: 'UTC', shiftLengthHours: 24, workspaceId: null });
    expect(s.participants.map((p: any) => p.userId)).toEqual([alice.userId, bob.userId]);
    expect(s.participants[0].email).toMatch(/@example\.test$/);
    const data = await onCall(owner);
    expect(data.schedules.map((x: any) => x.id)).toContain(s.id);
    const now = data.onCallNow.find((x: any) => x.scheduleId === s.id);
    expect(now).toMatchObject({ viaOverride: false, user: { userId: alice.userId } });
    const until = new Date(now.until).getTime() - Date.now();
    expect(until).toBeGreaterThan(11 * HOUR);
    expect(until).toBeLessThan(13 * HOUR);
    expect(new Date(now.until).toISOString().slice(11, 16)).toBe(s.handoffTime);
    expect(ok('deleteSchedule', await owner.delete(`/on-call/schedules/${s.id}`))).toEqual({ id: s.id, deleted: true });
    expect((await onCall(owner)).schedules.map((x: any) => x.id)).not.toContain(s.id);
    expect((await owner.delete(`/on-call/schedules/${s.id}`)).status).toBe(404);
  });

  it('keeps an IANA zone and a workspace', async () => {
    const s = await schedule(owner, { timezone: 'Europe/Berlin', workspaceId: o.workspaceId, shiftLengthHours: 8 });
    expect(s).toMatchObject({ timezone: 'Europe/Berlin', workspaceId: o.workspaceId, shiftLengthHours: 8 });
  });

  it('validation: zone, hand-over time, shift length, participants, workspace', async () => {
    field(await owner.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId], timezone: 'Mars/Olympus' }), 400, 'timezone');
    field(await owner.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '24:00', participantIds: [alice.userId] }), 400, 'handoffTime');
    field(await owner.post('/on-call/schedules', { name: 'x', shiftLengthHours: 0, handoffTime: '09:00', participantIds: [alice.userId] }), 400, 'shiftLengthHours');
    field(await owner.post('/on-call/schedules', { name: ' ', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId] }), 400, 'name');
    field(await owner.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId, 'usr_nobody'] }), 404, 'participantIds.1');
    field(await owner.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [other.userId] }), 404, 'participantIds.0');
    field(await owner.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId], workspaceId: other.workspaceId }), 404, 'workspaceId');
  });
});

describe('overrides', () => {
  it('a cover in progress puts its person on call (viaOverride), until its end; deleting it restores the rotation', async () => {
    const s = await schedule(owner);
    const startsAt = new Date(Date.now() - HOUR).toISOString();
    const endsAt = new Date(Date.now() + 2 * HOUR).toISOString();
    const ov = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s.id, userId: bob.userId, startsAt, endsAt }), 201);
    expect(ov).toMatchObject({ scheduleId: s.id, user: { userId: bob.userId }, startsAt, endsAt });
    let data = await onCall(owner);
    expect(data.onCallNow.find((x: any) => x.scheduleId === s.id)).toEqual({ scheduleId: s.id, user: expect.objectContaining({ userId: bob.userId }), viaOverride: true, until: endsAt });
    expect(data.overrides.map((x: any) => x.id)).toContain(ov.id);
    expect(ok('deleteOverride', await owner.delete(`/on-call/overrides/${ov.id}`))).toEqual({ id: ov.id, deleted: true });
    data = await onCall(owner);
    expect(data.onCallNow.find((x: any) => x.scheduleId === s.id)).toMatchObject({ user: { userId: alice.userId }, viaOverride: false });
    expect((await owner.delete(`/on-call/overrides/${ov.id}`)).status).toBe(404);
  });

  it('lists current and future overrides soonest first, never past ones; a future one shortens the shift', async () => {
    const s = await schedule(owner);
    const at = (h: number) => new Date(Date.now() + h * HOUR).toISOString();
    const past = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s.id, userId: bob.userId, startsAt: at(-5), endsAt: at(-4) }), 201);
    const later = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s.id, userId: bob.userId, startsAt: at(6), endsAt: at(7) }), 201);
    const sooner = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s.id, userId: bob.userId, startsAt: at(3), endsAt: at(4) }), 201);
    const data = await onCall(owner);
    const mine = data.overrides.filter((x: any) => x.scheduleId === s.id).map((x: any) => x.id);
    expect(mine).toEqual([sooner.id, later.id]);
    expect(mine).not.toContain(past.id);
    expect(data.onCallNow.find((x: any) => x.scheduleId === s.id)).toMatchObject({ user: { userId: alice.userId }, viaOverride: false, until: sooner.startsAt });
  });

  it('validation: endsAt after startsAt, known schedule and member', async () => {
    const s = await schedule(owner);
    const t = new Date().toISOString();
    field(await owner.post('/on-call/overrides', { scheduleId: s.id, userId: bob.userId, startsAt: t, endsAt: t }), 400, 'endsAt');
    field(await owner.post('/on-call/overrides', { scheduleId: 'sch_nothing', userId: bob.userId, startsAt: t, endsAt: new Date(Date.now() + HOUR).toISOString() }), 404, 'scheduleId');
    field(await owner.post('/on-call/overrides', { scheduleId: s.id, userId: other.userId, startsAt: t, endsAt: new Date(Date.now() + HOUR).toISOString() }), 404, 'userId');
  });
});

describe('unreachable', () => {
  it('names participants without an enabled, confirmed channel owned through their membership here', async () => {
    const carol = await srv.member(o.organizationId, 'member');
    const s = await schedule(owner, { participantIds: [carol.userId] });
    const has = async () => (await onCall(owner)).unreachable.some((p: any) => p.userId === carol.userId);
    expect(await has()).toBe(true);
    await channel(carol.membershipId, { enabled: false });
    await channel(carol.membershipId, { confirmed: false });
    await channel(null);
    expect(await has()).toBe(true);
    // The same person's channel in another organisation does not reach them here.
    const email = (await srv.db.selectFrom('users').select('email').where('id', '=', carol.userId).executeTakeFirstOrThrow()).email;
    const elsewhere = await addMember(srv.db, { organizationId: other.organizationId, email, role: 'member' });
    await channel(elsewhere.membershipId, { organizationId: other.organizationId });
    expect(await has()).toBe(true);
    // A kind this server cannot deliver (Telegram without a bot token, SMS enrolment) reaches nobody.
    await channel(carol.membershipId, { kind: 'telegram' });
    await channel(carol.membershipId, { kind: 'sms' });
    expect(await has()).toBe(true);
    await channel(carol.membershipId);
    expect(await has()).toBe(false);
    await owner.delete(`/on-call/schedules/${s.id}`);
  });
});

describe('escalation policies', () => {
  it('creates with target names and monitors, moves a monitor between policies, deletes', async () => {
    const s = await schedule(owner, { name: 'Night' });
    const ch = await channel(null);
    const dave = await srv.member(o.organizationId, 'member');
    const mon = await monitor(owner, o.workspaceId);
    const steps = [
      { afterMinutes: 0, targetType: 'schedule', targetId: s.id },
      { afterMinutes: 10, targetType: 'user', targetId: dave.userId },
      { afterMinutes: 30, targetType: 'channel', targetId: ch },
    ];
    const a = ok('createEscalationPolicy', await owner.post('/on-call/escalation-policies', { name: 'A', steps, monitorIds: [mon] }), 201);
    expect(a).toMatchObject({ name: 'A', repeat: 0, monitorIds: [mon] });
    expect(a.steps.map((x: any) => x.targetName)).toEqual(['Night', expect.stringMatching(/@example\.test$/), expect.stringMatching(/^Mail /)]);
    let data = await onCall(owner);
    expect(data.escalationPolicies.find((p: any) => p.id === a.id)).toEqual(a);
    expect(data.unreachable.map((p: any) => p.userId)).toContain(dave.userId); // named by a step, no channel
    expect((await policyForMonitor(srv.db, o.organizationId, mon))?.id).toBe(a.id);

    const b = ok('createEscalationPolicy', await owner.post('/on-call/escalation-policies', { name: 'B', repeat: 2, steps: [steps[2]], monitorIds: [mon, mon] }), 201);
    expect(b).toMatchObject({ repeat: 2, monitorIds: [mon] });
    data = await onCall(owner);
    expect(data.escalationPolicies.find((p: any) => p.id === a.id).monitorIds).toEqual([]);
    expect((await policyForMonitor(srv.db, o.organizationId, mon))?.id).toBe(b.id);

    // A deleted schedule pages nobody: its step stays, unnamed.
    await owner.delete(`/on-call/schedules/${s.id}`);
    data = await onCall(owner);
    expect(data.escalationPolicies.find((p: any) => p.id === a.id).steps[0]).toEqual({ ...steps[0], targetName: null });

    expect(ok('deleteEscalationPolicy', await owner.delete(`/on-call/escalation-policies/${b.id}`))).toEqual({ id: b.id, deleted: true });
    expect((await onCall(owner)).escalationPolicies.map((p: any) => p.id)).not.toContain(b.id);
    expect(await policyForMonitor(srv.db, o.organizationId, mon)).toBeNull();
    expect((await owner.delete(`/on-call/escalation-policies/${b.id}`)).status).toBe(404);
  });

  it('validation: targets and monitors of the organisation, steps in time order', async () => {
    const post = (body: Record<string, unknown>) => owner.post('/on-call/escalation-policies', { name: 'V', ...body });
    const good = { afterMinutes: 0, targetType: 'user', targetId: alice.userId };
    field(await post({ steps: [good, { afterMinutes: 5, targetType: 'user', targetId: other.userId }] }), 404, 'steps.1.targetId');
    field(await post({ steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: 'sch_nothing' }] }), 404, 'steps.0.targetId');
    const foreign = await channel(null, { organizationId: other.organizationId });
    field(await post({ steps: [good, { afterMinutes: 1, targetType: 'channel', targetId: foreign }] }), 404, 'steps.1.targetId');
    const foreignMon = await monitor(srv.api(other.apiKey), other.workspaceId);
    field(await post({ steps: [good], monitorIds: [foreignMon] }), 404, 'monitorIds.0');
    field(await post({ steps: [{ ...good, afterMinutes: 10 }, good] }), 400, 'steps.1.afterMinutes');
    field(await post({ steps: [] }), 400, 'steps');
    field(await post({ steps: [{ ...good, targetType: 'team' }] }), 400, 'steps.0.targetType');
  });
});

describe('tenancy and permissions', () => {
  it('another organisation sees none of it and gets 404 on every id', async () => {
    const s = await schedule(owner);
    const p = ok('createEscalationPolicy', await owner.post('/on-call/escalation-policies', { name: 'P', steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: s.id }] }), 201);
    const ov = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s.id, userId: bob.userId, startsAt: new Date().toISOString(), endsAt: new Date(Date.now() + HOUR).toISOString() }), 201);
    const them = srv.api(other.apiKey);
    const data = await onCall(them);
    expect(JSON.stringify(data)).not.toContain(s.id);
    expect(JSON.stringify(data)).not.toContain(p.id);
    expect((await them.delete(`/on-call/schedules/${s.id}`)).status).toBe(404);
    expect((await them.delete(`/on-call/escalation-policies/${p.id}`)).status).toBe(404);
    expect((await them.delete(`/on-call/overrides/${ov.id}`)).status).toBe(404);
    field(await them.post('/on-call/overrides', { scheduleId: s.id, userId: other.userId, startsAt: new Date().toISOString(), endsAt: new Date(Date.now() + HOUR).toISOString() }), 404, 'scheduleId');
    field(await them.post('/on-call/escalation-policies', { name: 'x', steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: s.id }] }), 404, 'steps.0.targetId');
  });

  it('a viewer reads (oncall:read) but every write is 403', async () => {
    const viewer = srv.api((await srv.member(o.organizationId, 'viewer')).apiKey);
    ok('getOnCall', await viewer.get('/on-call'));
    const s = await schedule(owner);
    const forbidden = [
      await viewer.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId] }),
      await viewer.delete(`/on-call/schedules/${s.id}`),
      await viewer.post('/on-call/escalation-policies', { name: 'x', steps: [{ afterMinutes: 0, targetType: 'user', targetId: alice.userId }] }),
      await viewer.delete('/on-call/escalation-policies/esc_x'),
      await viewer.post('/on-call/overrides', { scheduleId: s.id, userId: alice.userId, startsAt: new Date().toISOString(), endsAt: new Date(Date.now() + HOUR).toISOString() }),
      await viewer.delete('/on-call/overrides/ovr_x'),
    ];
    for (const r of forbidden) expect({ status: r.status, permission: r.body.vars?.permission }).toEqual({ status: 403, permission: 'notification_channel:manage' });
  });

  it('a key without oncall:read cannot read', async () => {
    const k = ok('createApiKey', await owner.post('/api-keys', { name: 'mon only', scopes: ['monitor:read'] }), 201);
    const res = await srv.api(k.token).get('/on-call');
    expect({ status: res.status, permission: res.body.vars?.permission }).toEqual({ status: 403, permission: 'oncall:read' });
  });

  it('a confined key sees its workspaces\' schedules plus organisation-wide ones, and cannot change the latter', async () => {
    const ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: `Team ${Date.now()}` }), 201).id;
    const inside = await schedule(owner, { workspaceId: ws2 });
    const outside = await schedule(owner, { workspaceId: o.workspaceId });
    const orgWide = await schedule(owner);
    const confined = srv.api((await srv.member(o.organizationId, 'member', [ws2])).apiKey);
    const ids = (await onCall(confined)).schedules.map((x: any) => x.id);
    expect(ids).toEqual(expect.arrayContaining([inside.id, orgWide.id]));
    expect(ids).not.toContain(outside.id);
    expect((await confined.delete(`/on-call/schedules/${outside.id}`)).status).toBe(404);
    const refused = await confined.delete(`/on-call/schedules/${orgWide.id}`);
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'workspace_confined' });
    const noWs = await confined.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId] });
    expect(noWs.status).toBe(403);
    ok('createSchedule', await confined.post('/on-call/schedules', { name: 'x', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [alice.userId], workspaceId: ws2 }), 201);
    ok('deleteSchedule', await confined.delete(`/on-call/schedules/${inside.id}`));
  });

  it('records audit entries for every change', async () => {
    const s = await schedule(owner);
    const p = ok('createEscalationPolicy', await owner.post('/on-call/escalation-policies', { name: 'Audited', steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: s.id }] }), 201);
    const ov = ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s.id, userId: bob.userId, startsAt: new Date().toISOString(), endsAt: new Date(Date.now() + HOUR).toISOString() }), 201);
    await owner.delete(`/on-call/overrides/${ov.id}`);
    await owner.delete(`/on-call/escalation-policies/${p.id}`);
    await owner.delete(`/on-call/schedules/${s.id}`);
    const rows = await srv.db.selectFrom('audit_log').select(['action', 'resource_id']).where('organization_id', '=', o.organizationId)
      .where('resource_id', 'in', [s.id, p.id, ov.id]).execute();
    expect(rows.map((r) => r.action).sort()).toEqual([
      'oncall.escalation_policy_created', 'oncall.escalation_policy_deleted', 'oncall.override_created', 'oncall.override_deleted',
      'oncall.schedule_created', 'oncall.schedule_deleted',
    ]);
  });
});

describe('stepChannels (escalation runner)', () => {
  it('resolves each target type to enabled, confirmed channels', async () => {
    const erin = await srv.member(o.organizationId, 'member');
    const frank = await srv.member(o.organizationId, 'member');
    const erinCh = await channel(erin.membershipId);
    await channel(erin.membershipId, { enabled: false });
    const frankCh = await channel(frank.membershipId);
    const s = await schedule(owner, { participantIds: [erin.userId, frank.userId] });
    const org = o.organizationId;
    const ws = o.workspaceId;
    const now = new Date();
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'schedule', targetId: s.id }, now)).toEqual([erinCh]);
    ok('createOverride', await owner.post('/on-call/overrides', { scheduleId: s.id, userId: frank.userId, startsAt: new Date(now.getTime() - HOUR).toISOString(), endsAt: new Date(now.getTime() + HOUR).toISOString() }), 201);
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'schedule', targetId: s.id }, now)).toEqual([frankCh]);
    // The next shift belongs to frank by the rotation.
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'schedule', targetId: s.id }, new Date(now.getTime() + 13 * HOUR))).toEqual([frankCh]);
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'user', targetId: erin.userId }, now)).toEqual([erinCh]);
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'user', targetId: alice.userId }, now)).toEqual([]);
    const shared = await channel(null);
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'channel', targetId: shared }, now)).toEqual([shared]);
    const off = await channel(null, { enabled: false });
    const unconfirmed = await channel(null, { confirmed: false });
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'channel', targetId: off }, now)).toEqual([]);
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'channel', targetId: unconfirmed }, now)).toEqual([]);
    expect(await stepChannels(srv.db, other.organizationId, other.workspaceId, { afterMinutes: 0, targetType: 'channel', targetId: shared }, now)).toEqual([]);
    await owner.delete(`/on-call/schedules/${s.id}`);
    expect(await stepChannels(srv.db, org, ws, { afterMinutes: 0, targetType: 'schedule', targetId: s.id }, now)).toEqual([]);
  });

  it('pages only channels the incident\'s workspace may use: its own and organisation-wide ones', async () => {
    const ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: `Elsewhere ${Date.now()}` }), 201).id;
    const gina = await srv.member(o.organizationId, 'member');
    const orgWide = await channel(gina.membershipId);
    const here = await channel(gina.membershipId, { workspaceId: o.workspaceId });
    const there = await channel(gina.membershipId, { workspaceId: ws2 });
    const org = o.organizationId;
    const now = new Date();
    const user = { afterMinutes: 0, targetType: 'user' as const, targetId: gina.userId };
    expect((await stepChannels(srv.db, org, o.workspaceId, user, now)).sort()).toEqual([orgWide, here].sort());
    expect((await stepChannels(srv.db, org, ws2, user, now)).sort()).toEqual([orgWide, there].sort());
    expect(await stepChannels(srv.db, org, o.workspaceId, { afterMinutes: 0, targetType: 'channel', targetId: there }, now)).toEqual([]);
    expect(await stepChannels(srv.db, org, ws2, { afterMinutes: 0, targetType: 'channel', targetId: there }, now)).toEqual([there]);
  });
});
