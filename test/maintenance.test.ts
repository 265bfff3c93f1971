/**
 * Maintenance windows: GET/POST/DELETE /maintenance — black-box against the
 * spec (api-v1.md, "Maintenance window", the maintenance rows and
 * "Maintenance semantics") and the contract's schemas; plus
 * `underMaintenance` (what the engine asks) against the database.
 */
import { underMaintenance } from '../src/alerting/maintenance';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';

let srv: TestServer;
let owner: ApiClient;
let orgId: string;
let ws: string;
let wsB: string;
let other: ApiClient;
let otherWs: string;
let mon: string[];
let monB: string;
let otherMon: string;

const MIN = 60_000;
const DAY = 86_400_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

function fails(res: ApiResponse, status: number, code?: string, field?: string) {
  expect({ status: res.status, code: code === undefined ? undefined : res.body?.code }).toEqual({ status, code });
  if (field !== undefined) expect(res.body.details?.field).toBe(field);
}

let n = 0;
async function monitor(api: ApiClient, workspaceId: string): Promise<string> {
  return ok('createMonitor', await api.post('/monitors', { name: `Mon ${++n}`, kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://mw.example/' }) }), 201).id;
}

/** Creates a window in `ws` over the first monitor: by default an hour from one hour ahead. */
async function create(body: Record<string, unknown> = {}, api = owner) {
  return ok('createMaintenanceWindow', await api.post('/maintenance', {
    title: `Window ${++n}`, workspaceId: ws, monitorIds: [mon[0]], startsAt: at(60 * MIN), endsAt: at(120 * MIN), ...body,
  }), 201);
}

const ids = (list: { id: string }[]) => list.map((w) => w.id);
const upcoming = async (api = owner) => ok('listMaintenanceWindows', await api.get('/maintenance'));
const past = async (api = owner) => ok('listMaintenanceWindows', await api.get('/maintenance?past=true'));

beforeAll(async () => {
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', WORKER: 'false' });
  const o = await srv.org();
  owner = srv.api(o.apiKey);
  orgId = o.organizationId;
  ws = o.workspaceId;
  wsB = ok('createWorkspace', await owner.post('/workspaces', { name: 'B' }), 201).id;
  mon = [await monitor(owner, ws), await monitor(owner, ws), await monitor(owner, ws), await monitor(owner, ws)];
  monB = await monitor(owner, wsB);
  const p = await srv.org();
  other = srv.api(p.apiKey);
  otherWs = p.workspaceId;
  otherMon = await monitor(other, otherWs);
});
afterAll(() => srv.close());

describe('POST /maintenance', () => {
  it('returns 201 with the window, defaults applied, and audits maintenance.created', async () => {
    const startsAt = '2030-03-01T02:00:00+01:00';
    const w = await create({ startsAt, endsAt: '2030-03-01T04:00:00+01:00', monitorIds: [mon[0], mon[1], mon[0]] });
    expect(w).toMatchObject({
      description: null, startsAt: '2030-03-01T01:00:00.000Z', endsAt: '2030-03-01T03:00:00.000Z', timezone: 'UTC',
      monitorIds: [mon[0], mon[1]], recurrenceRule: null, keepChecking: true, showOnStatusPage: true, notifySubscribers: false,
      workspaceId: ws, active: false, nextOccurrence: { startsAt: '2030-03-01T01:00:00.000Z', endsAt: '2030-03-01T03:00:00.000Z' },
    });
    const entries = ok('listAuditEntries', await owner.get('/audit?limit=200'));
    const e = entries.find((x: any) => x.action === 'maintenance.created' && x.resourceId === w.id);
    expect(e).toMatchObject({ resourceType: 'maintenance', workspaceId: ws, changes: {
      title: { from: null, to: w.title }, monitorIds: { from: null, to: [mon[0], mon[1]] }, startsAt: { from: null, to: w.startsAt },
      keepChecking: { from: null, to: true }, timezone: { from: null, to: 'UTC' },
    } });
  });

  it('keeps every field given; the recurrence rule is returned unchanged, supported or not', async () => {
    const w = await create({ description: 'db upgrade', timezone: 'Europe/Berlin', recurrenceRule: ' freq=daily;INTERVAL=2 ',
      keepChecking: false, showOnStatusPage: false, notifySubscribers: true });
    expect(w).toMatchObject({ description: 'db upgrade', timezone: 'Europe/Berlin', recurrenceRule: ' freq=daily;INTERVAL=2 ',
      keepChecking: false, showOnStatusPage: false, notifySubscribers: true });
    for (const rule of ['FREQ=YEARLY;BYMONTH=1', 'RRULE:FREQ=DAILY', 'FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO', 'garbage!']) {
      expect((await create({ recurrenceRule: rule })).recurrenceRule).toBe(rule);
    }
    const listed = (await upcoming()).find((x: any) => x.id === w.id);
    expect(listed.recurrenceRule).toBe(' freq=daily;INTERVAL=2 ');
  });

  it('refuses bad times, zones and monitors with details.field', async () => {
    const post = (body: Record<string, unknown>) => owner.post('/maintenance', {
      title: 'bad', workspaceId: ws, monitorIds: [mon[0]], startsAt: at(MIN), endsAt: at(2 * MIN), ...body });
    fails(await post({ endsAt: at(MIN), startsAt: at(MIN) }), 400, 'invalid_field', 'endsAt');
    fails(await post({ endsAt: at(0) }), 400, 'invalid_field', 'endsAt');
    fails(await post({ startsAt: '2030-03-01T02:00:00' }), 400, 'invalid_field', 'startsAt');
    fails(await post({ endsAt: 'tomorrow' }), 400, 'invalid_field', 'endsAt');
    fails(await post({ timezone: 'Mars/Olympus' }), 400, 'invalid_field', 'timezone');
    fails(await post({ timezone: '+01:00' }), 400, 'invalid_field', 'timezone');
    fails(await post({ monitorIds: [] }), 400, undefined, 'monitorIds');
    fails(await post({ monitorIds: [mon[0], otherMon] }), 400, 'invalid_field', 'monitorIds.1');
    fails(await post({ monitorIds: [monB] }), 400, 'invalid_field', 'monitorIds.0');
    fails(await post({ monitorIds: [mon[1], 'mon_missing'] }), 400, 'invalid_field', 'monitorIds.1');
    fails(await post({ title: '   ' }), 400, 'invalid_field', 'title');
    fails(await post({ title: undefined }), 400, 'missing_field', 'title');
    fails(await post({ workspaceId: otherWs }), 404, 'not_found', 'workspaceId');
  });

  it('a viewer may read but not manage (maintenance:manage)', async () => {
    const viewer = srv.api((await srv.member(orgId, 'viewer')).apiKey);
    ok('listMaintenanceWindows', await viewer.get('/maintenance'));
    fails(await viewer.post('/maintenance', { title: 'x', workspaceId: ws, monitorIds: [mon[0]], startsAt: at(MIN), endsAt: at(2 * MIN) }), 403, 'forbidden');
    const w = await create();
    fails(await viewer.delete(`/maintenance?id=${w.id}`), 403, 'forbidden');
  });

  it('a key scoped to incident:read lists windows and cannot create them', async () => {
    const key = ok('createApiKey', await owner.post('/api-keys', { name: 'reader', scopes: ['incident:read'] }), 201);
    const reader = srv.api(key.token);
    const w = await create();
    expect(ids(await upcoming(reader))).toContain(w.id);
    fails(await reader.post('/maintenance', { title: 'x', workspaceId: ws, monitorIds: [mon[0]], startsAt: at(MIN), endsAt: at(2 * MIN) }), 403, 'forbidden');
  });
});

describe('GET /maintenance', () => {
  it('lists windows in progress or ahead soonest first, and ended ones with past=true latest first', async () => {
    const later = await create({ startsAt: at(5 * DAY), endsAt: at(5 * DAY + MIN) });
    const soon = await create({ startsAt: at(2 * DAY), endsAt: at(2 * DAY + MIN) });
    const now = await create({ startsAt: at(-10 * MIN), endsAt: at(50 * MIN) });
    const endedLong = await create({ startsAt: at(-3 * DAY), endsAt: at(-3 * DAY + MIN) });
    const endedRecently = await create({ startsAt: at(-2 * DAY), endsAt: at(-2 * DAY + MIN) });
    // Recurring: first occurrence long over, today's began 5 minutes ago → in progress.
    const daily = await create({ startsAt: at(-10 * DAY - 5 * MIN), endsAt: at(-10 * DAY + 30 * MIN), recurrenceRule: 'FREQ=DAILY' });
    // COUNT exhausted → past; its last occurrence ended a day ago.
    const counted = await create({ startsAt: at(-4 * DAY - 60 * MIN), endsAt: at(-4 * DAY - 30 * MIN), recurrenceRule: 'FREQ=DAILY;COUNT=4' });
    // Unsupported rule: only the first occurrence, long over → past.
    const yearly = await create({ startsAt: at(-6 * DAY), endsAt: at(-6 * DAY + MIN), recurrenceRule: 'FREQ=YEARLY' });

    const up = ids(await upcoming());
    const mine = (list: string[], set: string[]) => list.filter((id) => set.includes(id));
    expect(mine(up, [later.id, soon.id, now.id, daily.id])).toEqual([now.id, daily.id, soon.id, later.id]);
    for (const id of [endedLong.id, endedRecently.id, counted.id, yearly.id]) expect(up).not.toContain(id);
    const gone = ids(await past());
    expect(mine(gone, [endedLong.id, endedRecently.id, counted.id, yearly.id])).toEqual([counted.id, endedRecently.id, endedLong.id, yearly.id]);
    for (const id of [later.id, soon.id, now.id, daily.id]) expect(gone).not.toContain(id);
    ok('listMaintenanceWindows', await owner.get('/maintenance?past=false'));
  });

  it('active and nextOccurrence: the occurrence in progress, else the next, else null', async () => {
    const running = await create({ startsAt: at(-10 * MIN), endsAt: at(50 * MIN) });
    expect(running.active).toBe(true);
    expect(running.nextOccurrence).toEqual({ startsAt: running.startsAt, endsAt: running.endsAt });
    const daily = await create({ startsAt: at(-3 * DAY + 60 * MIN), endsAt: at(-3 * DAY + 90 * MIN), recurrenceRule: 'FREQ=DAILY' });
    expect(daily.active).toBe(false);
    expect(daily.nextOccurrence).toEqual({ startsAt: new Date(Date.parse(daily.startsAt) + 3 * DAY).toISOString(), endsAt: new Date(Date.parse(daily.endsAt) + 3 * DAY).toISOString() });
    const weeklyNow = await create({ startsAt: at(-7 * DAY - 10 * MIN), endsAt: at(-7 * DAY + 10 * MIN), recurrenceRule: 'FREQ=WEEKLY' });
    expect(weeklyNow.active).toBe(true);
    const ended = await create({ startsAt: at(-DAY), endsAt: at(-DAY + MIN), recurrenceRule: 'FREQ=DAILY;BYDAY=XX' });
    expect(ended).toMatchObject({ active: false, nextOccurrence: null, recurrenceRule: 'FREQ=DAILY;BYDAY=XX' });
    expect(ids(await past())).toContain(ended.id);
  });

  it('never shows another organisation\'s windows; a confined key sees its workspaces only', async () => {
    const a = await create();
    const b = await create({ workspaceId: wsB, monitorIds: [monB] });
    expect(ids(await upcoming(other))).not.toContain(a.id);
    const confined = srv.api((await srv.member(orgId, 'member', [wsB])).apiKey);
    const seen = ids(await upcoming(confined));
    expect(seen).toContain(b.id);
    expect(seen).not.toContain(a.id);
    fails(await confined.post('/maintenance', { title: 'x', workspaceId: ws, monitorIds: [mon[0]], startsAt: at(MIN), endsAt: at(2 * MIN) }), 404, 'not_found', 'workspaceId');
    fails(await confined.delete(`/maintenance?id=${a.id}`), 404, 'not_found');
    ok('createMaintenanceWindow', await confined.post('/maintenance', { title: 'mine', workspaceId: wsB, monitorIds: [monB], startsAt: at(MIN), endsAt: at(2 * MIN) }), 201);
  });

  it('refuses a past value that is not a boolean', async () => {
    fails(await owner.get('/maintenance?past=maybe'), 400);
  });
});

describe('DELETE /maintenance', () => {
  it('deletes the window, audits maintenance.deleted, then answers 404', async () => {
    const w = await create({ startsAt: at(-MIN), endsAt: at(MIN) });
    fails(await other.delete(`/maintenance?id=${w.id}`), 404, 'not_found');
    expect(ok('deleteMaintenanceWindow', await owner.delete(`/maintenance?id=${w.id}`))).toEqual({ id: w.id, deleted: true });
    expect(ids(await upcoming())).not.toContain(w.id);
    expect(ids(await past())).not.toContain(w.id);
    fails(await owner.delete(`/maintenance?id=${w.id}`), 404, 'not_found');
    fails(await owner.delete('/maintenance'), 400);
    const entries = ok('listAuditEntries', await owner.get('/audit?limit=200'));
    expect(entries.find((x: any) => x.action === 'maintenance.deleted' && x.resourceId === w.id))
      .toMatchObject({ resourceType: 'maintenance', changes: { title: { from: w.title, to: null }, monitorIds: { from: [mon[0]], to: null } } });
  });
});

describe('underMaintenance', () => {
  it('finds the monitors inside a live window; keepChecking false wins on overlap; deleting ends it at once', async () => {
    const [m1, m2, m3, m4] = mon;
    // Clear earlier tests' windows so only these count.
    await srv.db.deleteFrom('maintenance_windows').execute();
    const checking = await create({ monitorIds: [m1, m2], startsAt: at(-10 * MIN), endsAt: at(10 * MIN) });
    const dark = await create({ monitorIds: [m2], startsAt: at(-5 * MIN), endsAt: at(10 * MIN), keepChecking: false });
    await create({ monitorIds: [m3], startsAt: at(10 * MIN), endsAt: at(20 * MIN) }); // not yet
    await create({ monitorIds: [m4], startsAt: at(-20 * MIN), endsAt: at(-10 * MIN), recurrenceRule: 'FREQ=YEARLY' }); // over, not expanded
    const recurring = await create({ monitorIds: [m3], startsAt: at(-2 * DAY - MIN), endsAt: at(-2 * DAY + MIN), recurrenceRule: 'FREQ=DAILY', keepChecking: false });

    const held = await underMaintenance(srv.db, [m1, m2, m3, m4, monB], new Date());
    expect(Object.fromEntries(held)).toEqual({
      [m1]: { keepChecking: true, windowId: checking.id },
      [m2]: { keepChecking: false, windowId: dark.id },
      [m3]: { keepChecking: false, windowId: recurring.id },
    });
    expect((await underMaintenance(srv.db, [m1], new Date(Date.now() + 11 * MIN))).size).toBe(0);
    expect(await underMaintenance(srv.db, [], new Date())).toEqual(new Map());

    ok('deleteMaintenanceWindow', await owner.delete(`/maintenance?id=${dark.id}`));
    expect((await underMaintenance(srv.db, [m2], new Date())).get(m2)).toEqual({ keepChecking: true, windowId: checking.id });
  });
});
