/**
 * GET and PATCH /maintenance/{id}: one window read, and changed in place —
 * over REST and Connect (JSON and binary protobuf), each field checked as on
 * create (same codes and details.field), the same permission and confinement
 * as create and delete, an audit entry, and a window in progress that stays
 * itself (same id, still active) when edited.
 */
import { routes } from '../gen/routes';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { connectCall } from './support/wire-call';

let srv: TestServer;
let owner: ApiClient;
let ownerKey: string;
let orgId: string;
let ws: string;
let wsB: string;
let other: ApiClient;
let mon: string[];
let monB: string;
let otherMon: string;

const MIN = 60_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
const iso = (s: string) => new Date(s).toISOString();

function fails(res: ApiResponse, status: number, code: string, field?: string) {
  expect({ status: res.status, code: res.body?.code, field: res.body?.details?.field }).toEqual({ status, code, field });
}

let n = 0;
async function monitor(api: ApiClient, workspaceId: string): Promise<string> {
  return ok('createMonitor', await api.post('/monitors', { name: `Mon ${++n}`, kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://mw.example/' }) }), 201).id;
}

async function create(body: Record<string, unknown> = {}, api = owner) {
  return ok('createMaintenanceWindow', await api.post('/maintenance', {
    title: `Window ${++n}`, workspaceId: ws, monitorIds: [mon[0]], startsAt: at(60 * MIN), endsAt: at(120 * MIN), ...body,
  }), 201);
}

const route = (op: string) => routes.find((r) => r.operationId === op)!;
const audits = async (id: string) => (ok('listAuditEntries', await owner.get('/audit?limit=200')) as any[]).filter((e) => e.resourceId === id);

beforeAll(async () => {
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', WORKER: 'false' });
  const o = await srv.org();
  ownerKey = o.apiKey;
  owner = srv.api(o.apiKey);
  orgId = o.organizationId;
  ws = o.workspaceId;
  wsB = ok('createWorkspace', await owner.post('/workspaces', { name: 'B' }), 201).id;
  mon = [await monitor(owner, ws), await monitor(owner, ws), await monitor(owner, ws)];
  monB = await monitor(owner, wsB);
  const p = await srv.org();
  other = srv.api(p.apiKey);
  otherMon = await monitor(other, p.workspaceId);
});
afterAll(() => srv.close());

describe('GET /maintenance/{id}', () => {
  it('answers one window in the list shape, upcoming or over', async () => {
    const w = await create();
    expect(ok('getMaintenanceWindow', await owner.get(`/maintenance/${w.id}`))).toEqual(w);
    const over = await create({ startsAt: at(-120 * MIN), endsAt: at(-60 * MIN) });
    expect(ok('getMaintenanceWindow', await owner.get(`/maintenance/${over.id}`))).toMatchObject({ id: over.id, nextOccurrence: null, active: false });
  });

  it('answers 404 for a made-up id, another organisation\'s and another workspace\'s to a confined key, alike', async () => {
    const w = await create();
    const made = await owner.get('/maintenance/mw_doesnotexist000000000');
    fails(made, 404, 'not_found', 'id');
    const foreign = await other.get(`/maintenance/${w.id}`);
    const confined = srv.api((await srv.member(orgId, 'member', [wsB])).apiKey);
    const outside = await confined.get(`/maintenance/${w.id}`);
    for (const r of [foreign, outside]) expect({ status: r.status, body: r.body }).toEqual({ status: made.status, body: made.body });
    const viewer = srv.api((await srv.member(orgId, 'viewer')).apiKey);
    ok('getMaintenanceWindow', await viewer.get(`/maintenance/${w.id}`));
  });
});

describe('PATCH /maintenance/{id}', () => {
  it('changes the fields given, keeps the others and the id, and audits maintenance.updated with what changed', async () => {
    const w = await create({ description: 'disk swap', keepChecking: true });
    const startsAt = '2031-05-01T02:00:00+02:00';
    const res = ok('updateMaintenanceWindow', await owner.patch(`/maintenance/${w.id}`, {
      title: '  Kernel update ', startsAt, endsAt: '2031-05-01T03:30:00+02:00', timezone: 'Europe/Berlin', monitorIds: [mon[1], mon[2], mon[1]],
      recurrenceRule: 'FREQ=WEEKLY', keepChecking: false, showOnStatusPage: false, notifySubscribers: true,
    }));
    expect(res).toEqual({
      ...w, title: 'Kernel update', startsAt: iso(startsAt), endsAt: '2031-05-01T01:30:00.000Z', timezone: 'Europe/Berlin', monitorIds: [mon[1], mon[2]],
      recurrenceRule: 'FREQ=WEEKLY', keepChecking: false, showOnStatusPage: false, notifySubscribers: true,
      nextOccurrence: { startsAt: iso(startsAt), endsAt: '2031-05-01T01:30:00.000Z' }, active: false,
    });
    expect(res.description).toBe('disk swap');
    expect(ok('getMaintenanceWindow', await owner.get(`/maintenance/${w.id}`))).toEqual(res);
    const [entry] = (await audits(w.id)).filter((e) => e.action === 'maintenance.updated');
    expect(entry.changes).toEqual({
      title: { from: w.title, to: 'Kernel update' }, startsAt: { from: w.startsAt, to: res.startsAt }, endsAt: { from: w.endsAt, to: res.endsAt },
      timezone: { from: 'UTC', to: 'Europe/Berlin' }, monitorIds: { from: [mon[0]], to: [mon[1], mon[2]] }, recurrenceRule: { from: null, to: 'FREQ=WEEKLY' },
      keepChecking: { from: true, to: false }, showOnStatusPage: { from: true, to: false }, notifySubscribers: { from: false, to: true },
    });
    expect(entry.workspaceId).toBe(ws);
  });

  it('clears description and recurrenceRule with null or an empty string; a change to the stored values writes no audit entry', async () => {
    const w = await create({ description: 'x', recurrenceRule: 'FREQ=DAILY' });
    expect(ok('updateMaintenanceWindow', await owner.patch(`/maintenance/${w.id}`, { description: null, recurrenceRule: '' })))
      .toMatchObject({ description: null, recurrenceRule: null });
    const before = (await audits(w.id)).length;
    expect(ok('updateMaintenanceWindow', await owner.patch(`/maintenance/${w.id}`, { title: w.title, startsAt: w.startsAt }))).toMatchObject({ title: w.title });
    expect((await audits(w.id)).length).toBe(before);
  });

  it('checks each field as create does, with the same code and details.field', async () => {
    const w = await create();
    const patch = (body: unknown) => owner.patch(`/maintenance/${w.id}`, body);
    // The same body on create and on update answers the same code and field.
    const same = async (body: Record<string, unknown>, status: number, code: string, field: string) => {
      fails(await patch(body), status, code, field);
      fails(await owner.post('/maintenance', { title: 't', workspaceId: ws, monitorIds: [mon[0]], startsAt: at(MIN), endsAt: at(2 * MIN), ...body }), status, code, field);
    };
    await same({ title: '   ' }, 400, 'invalid_field', 'title');
    await same({ startsAt: '2030-01-01T00:00:00' }, 400, 'invalid_field', 'startsAt');
    await same({ timezone: 'Mars/Olympus' }, 400, 'invalid_field', 'timezone');
    await same({ monitorIds: [mon[0], monB] }, 400, 'invalid_field', 'monitorIds.1');
    await same({ monitorIds: [otherMon] }, 400, 'invalid_field', 'monitorIds.0');
    await same({ monitorIds: [] }, 400, 'invalid_field', 'monitorIds');
    await same({ title: 'x'.repeat(201) }, 400, 'invalid_field', 'title');
    // endsAt stays after startsAt, whichever is given.
    fails(await patch({ endsAt: at(30 * MIN) }), 400, 'invalid_field', 'endsAt');
    fails(await patch({ startsAt: at(180 * MIN) }), 400, 'invalid_field', 'endsAt');
    // Nothing to change; a workspace move; an unknown field.
    expect((await patch({})).status).toBe(400);
    expect((await patch({ workspaceId: wsB })).status).toBe(400);
    expect(ok('getMaintenanceWindow', await owner.get(`/maintenance/${w.id}`))).toEqual(w);
  });

  it('an in-progress window edited keeps its id and stays active; moving its end to now ends it', async () => {
    const w = await create({ startsAt: at(-30 * MIN), endsAt: at(30 * MIN) });
    expect(w.active).toBe(true);
    const edited = ok('updateMaintenanceWindow', await owner.patch(`/maintenance/${w.id}`, { title: 'Longer', endsAt: at(90 * MIN), monitorIds: [mon[0], mon[1]] }));
    expect(edited).toMatchObject({ id: w.id, createdAt: w.createdAt, active: true, startsAt: w.startsAt, title: 'Longer' });
    const listed = (ok('listMaintenanceWindows', await owner.get('/maintenance')) as any[]).find((x) => x.id === w.id);
    expect(listed).toMatchObject({ active: true, title: 'Longer' });
    const ended = ok('updateMaintenanceWindow', await owner.patch(`/maintenance/${w.id}`, { endsAt: at(-1000) }));
    expect(ended).toMatchObject({ id: w.id, active: false, nextOccurrence: null });
  });

  it('needs maintenance:manage (a viewer is refused), and answers foreign and out-of-confinement ids as made-up ones', async () => {
    const w = await create();
    const viewer = srv.api((await srv.member(orgId, 'viewer')).apiKey);
    const refused = await viewer.patch(`/maintenance/${w.id}`, { title: 'no' });
    fails(refused, 403, 'forbidden');
    expect(refused.body.vars.permission).toBe('maintenance:manage');
    const made = await owner.patch('/maintenance/mw_doesnotexist000000000', { title: 'x' });
    fails(made, 404, 'not_found', 'id');
    const confined = srv.api((await srv.member(orgId, 'member', [wsB])).apiKey);
    for (const r of [await other.patch(`/maintenance/${w.id}`, { title: 'x' }), await confined.patch(`/maintenance/${w.id}`, { title: 'x' })]) {
      expect({ status: r.status, body: r.body }).toEqual({ status: made.status, body: made.body });
    }
    // Within its workspace, the confined member edits; it may not name another workspace's monitor.
    const mine = await create({ workspaceId: wsB, monitorIds: [monB] }, confined);
    ok('updateMaintenanceWindow', await confined.patch(`/maintenance/${mine.id}`, { title: 'mine, edited' }));
    fails(await confined.patch(`/maintenance/${mine.id}`, { monitorIds: [mon[0]] }), 400, 'invalid_field', 'monitorIds.0');
    expect(ok('getMaintenanceWindow', await owner.get(`/maintenance/${w.id}`)).title).toBe(w.title);
  });

  it('over Connect, JSON and binary protobuf: the same change and the same refusals', async () => {
    const w = await create({ description: 'keep me', recurrenceRule: 'FREQ=DAILY' });
    const r = route('updateMaintenanceWindow');
    const json = await connectCall(srv.url, { route: r, token: ownerKey, path: { id: w.id }, query: {}, body: { title: 'Via Connect', keepChecking: false } }, false);
    expect(json.status).toBe(200);
    expect(json.json.data).toMatchObject({ id: w.id, title: 'Via Connect', description: 'keep me', recurrenceRule: 'FREQ=DAILY' });
    expect(json.json.data.keepChecking ?? false).toBe(false); // proto3 JSON leaves a false out
    // Binary: absent fields are left as they are; an empty string clears the rule.
    const bin = await connectCall(srv.url, { route: r, token: ownerKey, path: { id: w.id }, query: {}, body: { recurrenceRule: '', endsAt: at(150 * MIN) } }, true);
    expect(bin.status).toBe(200);
    expect(bin.json.data).toMatchObject({ id: w.id, title: 'Via Connect', description: 'keep me', endsAt: iso(bin.json.data.endsAt) });
    expect(bin.json.data.recurrenceRule).toBeUndefined();
    const stored = ok('getMaintenanceWindow', await owner.get(`/maintenance/${w.id}`));
    expect(stored).toMatchObject({ title: 'Via Connect', recurrenceRule: null, keepChecking: false, description: 'keep me' });
    const bad = await connectCall(srv.url, { route: r, token: ownerKey, path: { id: w.id }, query: {}, body: { timezone: 'Nowhere/Else' } }, true);
    expect({ status: bad.status, code: bad.code, field: (bad.details as any)?.field }).toEqual({ status: 400, code: 'invalid_field', field: 'timezone' });
    const missing = await connectCall(srv.url, { route: r, token: ownerKey, path: { id: 'mw_doesnotexist000000000' }, query: {}, body: { title: 'x' } }, false);
    expect({ status: missing.status, code: missing.code }).toEqual({ status: 404, code: 'not_found' });
    const get = await connectCall(srv.url, { route: route('getMaintenanceWindow'), token: ownerKey, path: { id: w.id }, query: {} }, true);
    expect(get.json.data).toMatchObject({ id: w.id, title: 'Via Connect' });
  });
});
