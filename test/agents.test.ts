/**
 * Server agents through the API and the report endpoint: enrolment with a
 * one-time token (only its hash stored), the list, deletion, confinement;
 * reports on the ingestion buffer (identity, samples newest first, clamps,
 * duplicates, refusals); `agent` monitors opening and resolving incidents on
 * thresholds and going down when the agent goes quiet; retention.
 */
import { createHash } from 'node:crypto';
import { createProbe } from '../src/domain/probes';
import { housekeeping } from '../src/engine/housekeeping';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

let server: TestServer;
let owner: ApiClient;
let viewer: ApiClient;
let confined: ApiClient;
let organizationId: string;
let ws1: string;
let ws2: string;

beforeAll(async () => {
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000' });
  const org = await server.org({ plan: 'enterprise' });
  organizationId = org.organizationId;
  owner = server.api(org.apiKey);
  ws1 = org.workspaceId;
  ws2 = ok('createWorkspace', await owner.post('/workspaces', { name: 'Second' }), 201).id;
  viewer = server.api((await server.member(organizationId, 'viewer')).apiKey);
  confined = server.api((await server.member(organizationId, 'admin', [ws2])).apiKey);
});
afterAll(() => server.close());

/** Posts a report as the agent program does; the raw response. */
async function report(token: string | null, body: unknown): Promise<Response> {
  return fetch(`${server.url}/agent/v1/report`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
}

/** A sample with every figure; `over` replaces some. */
function sample(over: Record<string, unknown> = {}) {
  return {
    at: new Date().toISOString(), cpuPercent: 12.5, memoryPercent: 40, memoryUsedBytes: 4e9, memoryTotalBytes: 1e10,
    swapPercent: null, swapUsedBytes: 0, swapTotalBytes: 0, diskPercent: 55,
    disks: [{ mount: '/', filesystem: '/dev/vda', type: 'ext4', sizeBytes: 1e11, usedBytes: 5.5e10, percent: 55 }, { mount: '/data', filesystem: '/dev/vdb', type: 'xfs', sizeBytes: 1e12, usedBytes: 1e11, percent: 10 }],
    load1: 0.5, load5: 0.4, load15: 0.3, networkRxBytes: 1000, networkTxBytes: 2000, networkRxBytesPerSecond: 100, networkTxBytesPerSecond: 200,
    ...over,
  };
}

const drained = async () => Number((await server.db.selectFrom('ingest_drained').select('items').where('buffer', '=', 'agent_report_buffer').executeTakeFirst())?.items ?? 0);
const buffered = async (agentId: string) => Number((await server.db.selectFrom('agent_report_buffer').select((eb) => eb.fn.countAll().as('n')).where('agent_id', '=', agentId).executeTakeFirstOrThrow()).n);

const identity = { hostname: 'web-1', os: 'Debian GNU/Linux 12 (linux 6.1.0, x64)', version: '0.1.0', intervalSeconds: 1 };

async function enrol(api: ApiClient, body: Record<string, unknown>) {
  return ok('enrollAgent', await api.post('/agents', body), 201) as { id: string; token: string; name: string; workspaceId: string | null };
}

test('enrol, list and delete: the token is shown once and only its hash is stored; viewers cannot write', async () => {
  const a = await enrol(owner, { name: '  db-1 ' });
  expect(a).toMatchObject({ name: 'db-1', workspaceId: null, hostname: null, os: null, version: null, lastSeenAt: null });
  expect(a.token).toMatch(/^ag_[A-Za-z0-9_-]{43}$/);

  const listed = ok('listAgents', await owner.get('/agents')).find((x: { id: string }) => x.id === a.id);
  expect(listed).toEqual({ ...a, token: undefined, createdAt: listed.createdAt });
  expect(JSON.stringify(ok('listAgents', await owner.get('/agents')))).not.toContain(a.token);

  // Only the SHA-256 of the token is kept; neither the agent row nor the audit log holds the token.
  const tokens = await server.db.selectFrom('agent_tokens').selectAll().where('agent_id', '=', a.id).execute();
  expect(tokens).toEqual([{ agent_id: a.id, hash: createHash('sha256').update(a.token).digest() }]);
  const row = await server.db.selectFrom('agents').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
  expect(JSON.stringify(row)).not.toContain(a.token.slice(3));
  const auditText = JSON.stringify(await server.db.selectFrom('audit_log').selectAll().where('resource_id', '=', a.id).execute());
  expect(auditText).toContain('agent.enrolled');
  expect(auditText).not.toContain(a.token.slice(3));

  // Viewers read, never write.
  expect((await viewer.get('/agents')).status).toBe(200);
  expect((await viewer.post('/agents', { name: 'nope' })).status).toBe(403);
  expect((await viewer.delete(`/agents?id=${a.id}`)).status).toBe(403);

  // Bad input.
  expect((await owner.post('/agents', { name: '   ' })).body.details.field).toBe('name');
  expect((await owner.post('/agents', { name: 'x', workspaceId: 'ws_missing' })).status).toBe(404);
  const missing = await owner.delete('/agents');
  expect([missing.status, missing.body.code]).toEqual([400, 'missing_field']);
  expect((await owner.delete('/agents?id=agt_missing')).status).toBe(404);

  // Deleted by body id; then it is gone with its token.
  ok('deleteAgent', await owner.delete('/agents', { id: a.id }));
  expect(ok('listAgents', await owner.get('/agents')).some((x: { id: string }) => x.id === a.id)).toBe(false);
  expect(await server.db.selectFrom('agent_tokens').selectAll().where('agent_id', '=', a.id).execute()).toEqual([]);
  expect((await report(a.token, { ...identity, samples: [sample()] })).status).toBe(401);
});

test('a key confined to a workspace sees organisation-wide agents and its own, and cannot touch the rest', async () => {
  const orgWide = await enrol(owner, { name: 'shared' });
  const inWs1 = await enrol(owner, { name: 'ws1-box', workspaceId: ws1 });
  const refused = await confined.post('/agents', { name: 'mine' });
  expect([refused.status, refused.body.code]).toEqual([403, 'workspace_confined']);
  expect((await confined.post('/agents', { name: 'mine', workspaceId: ws1 })).status).toBe(404);
  const mine = await enrol(confined, { name: 'mine', workspaceId: ws2 });
  expect(mine.workspaceId).toBe(ws2);

  const seen = ok('listAgents', await confined.get('/agents')).map((x: { id: string }) => x.id);
  expect(seen).toEqual(expect.arrayContaining([orgWide.id, mine.id]));
  expect(seen).not.toContain(inWs1.id);
  expect((await confined.get(`/agents/${inWs1.id}/metrics`)).status).toBe(404);
  expect((await confined.delete(`/agents?id=${inWs1.id}`)).status).toBe(404);
  const orgWideDelete = await confined.delete(`/agents?id=${orgWide.id}`);
  expect([orgWideDelete.status, orgWideDelete.body.code]).toEqual([403, 'workspace_confined']);
  ok('getAgentMetrics', await confined.get(`/agents/${orgWide.id}/metrics`));
  ok('deleteAgent', await confined.delete(`/agents?id=${mine.id}`));
  // The owner sees everything.
  expect(ok('listAgents', await owner.get('/agents')).map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([orgWide.id, inWs1.id]));
});

test('another organisation\'s agent answers 404, never 403, to every operation; the token is in no later answer, the audit log included', async () => {
  const theirs = await server.org({ plan: 'business' });
  const them = server.api(theirs.apiKey);
  const a = await enrol(owner, { name: 'private-box', workspaceId: ws1 });
  const refused = [
    await them.get(`/agents/${a.id}/metrics`),
    await them.get(`/agents/${a.id}/metrics?hours=1&limit=1`),
    await them.delete(`/agents?id=${a.id}`),
    await them.delete('/agents', { id: a.id }),
    // Their enrolment into our workspace, and their monitor watching our agent, find nothing either.
    await them.post('/agents', { name: 'intruder', workspaceId: ws1 }),
  ];
  expect(refused.map((r) => [r.status, r.body.code])).toEqual(refused.map(() => [404, 'not_found']));
  const watch = await them.post('/monitors', { name: 'theirs', kind: 'agent', workspaceId: theirs.workspaceId, config: JSON.stringify({ agentId: a.id }) });
  expect([watch.status, watch.body.details.field]).toEqual([400, 'config.agentId']);
  expect(ok('listAgents', await them.get('/agents'))).toEqual([]);
  // Still ours, untouched.
  expect(ok('listAgents', await owner.get('/agents')).map((x: { id: string }) => x.id)).toContain(a.id);

  // The token was in the 201 only: not in the list, the metrics or the audit log as the API serves it.
  ok('deleteAgent', await owner.delete(`/agents?id=${a.id}`));
  const later = JSON.stringify([ok('listAgents', await owner.get('/agents')), ok('listAuditEntries', await owner.get('/audit?limit=200'))]);
  expect(later).toContain(a.id);
  expect(later).not.toContain(a.token.slice(3));
});

test('hourly roll-ups over days: one entry per hour with samples, newest first, the window in days clamped, visible as the agent is', async () => {
  const a = await enrol(owner, { name: 'hourly', workspaceId: ws1 });
  const hourStart = (ms: number) => Math.floor(ms / 3_600_000) * 3_600_000;
  const now = Date.now();
  const threeDays = hourStart(now - 3 * 86_400_000) + 60_000;
  const twoHours = hourStart(now - 2 * 3_600_000) + 60_000;
  const at = [threeDays, threeDays + 600_000, twoHours, twoHours + 60_000, twoHours + 120_000];
  const cpu = [10, 50, 20, 40, 90];
  const samples = at.map((t, i) => sample({ at: new Date(t).toISOString(), cpuPercent: cpu[i], load1: i === 2 ? null : 1 + i, networkTxBytes: 100 * (i + 1) }));
  const res = await report(a.token, { ...identity, samples });
  expect(await res.json()).toEqual({ accepted: 5, dropped: 0 });
  const hours = await until('the roll-ups', async () => {
    const d = ok('getAgentHourlyMetrics', await owner.get(`/agents/${a.id}/metrics/hourly?days=7`));
    return d.length === 2 && d.reduce((n: number, h: { samples: number }) => n + h.samples, 0) === 5 ? d : null;
  });
  expect(hours.map((h: { hour: string; samples: number }) => [h.hour, h.samples])).toEqual([
    [new Date(hourStart(twoHours)).toISOString(), 3],
    [new Date(hourStart(threeDays)).toISOString(), 2],
  ]);
  expect(hours[0].cpuPercent).toEqual({ avg: 50, min: 20, max: 90, sum: 150, count: 3 });
  // A figure one sample lacked is averaged over the samples that had it.
  expect(hours[0].load1).toEqual({ avg: 4.5, min: 4, max: 5, sum: 9, count: 2 });
  expect(hours[0].networkTxBytes.sum).toBe(300 + 400 + 500);
  expect(hours[1].cpuPercent).toEqual({ avg: 30, min: 10, max: 50, sum: 60, count: 2 });
  // The default window is 7 days; 1 day (and 0, clamped to 1) leaves the older hour out; past 366 is 366.
  expect(ok('getAgentHourlyMetrics', await owner.get(`/agents/${a.id}/metrics/hourly`))).toHaveLength(2);
  for (const days of ['1', '0', '-5']) expect(ok('getAgentHourlyMetrics', await owner.get(`/agents/${a.id}/metrics/hourly?days=${days}`))).toHaveLength(1);
  expect(ok('getAgentHourlyMetrics', await owner.get(`/agents/${a.id}/metrics/hourly?days=100000`))).toHaveLength(2);
  // Bad input is a 400 naming the parameter; a viewer reads; another workspace's key finds no such agent.
  const bad = await owner.get(`/agents/${a.id}/metrics/hourly?days=many`);
  expect([bad.status, bad.body.details?.field]).toEqual([400, 'days']);
  expect(ok('getAgentHourlyMetrics', await viewer.get(`/agents/${a.id}/metrics/hourly`))).toHaveLength(2);
  expect((await confined.get(`/agents/${a.id}/metrics/hourly`)).status).toBe(404);
  expect((await owner.get('/agents/ag_nobody/metrics/hourly')).status).toBe(404);
});

test('reports: identity and samples through the buffer, newest first, clamps, duplicates kept once, refusals', async () => {
  const a = await enrol(owner, { name: 'reporter', workspaceId: ws1 });
  const t0 = Date.now() - 60_000;
  const samples = [0, 1, 2].map((i) => sample({ at: new Date(t0 + i * 10_000).toISOString(), cpuPercent: 10 * (i + 1) }));
  const drainedBefore = await drained();
  const res = await report(a.token, { ...identity, sentAt: new Date().toISOString(), samples });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ accepted: 3, dropped: 0 });
  // Answered after the commit: the samples are in the buffer, or already taken from it.
  expect((await buffered(a.id)) + (await drained()) - drainedBefore).toBeGreaterThanOrEqual(3);
  // The same samples again (an agent retrying after a lost answer) are stored once.
  expect((await report(a.token, { ...identity, samples })).status).toBe(200);

  const agent = await until('the report to be drained', async () => {
    const row = ok('listAgents', await owner.get('/agents')).find((x: { id: string }) => x.id === a.id);
    return row?.lastSeenAt ? row : null;
  });
  expect(agent).toMatchObject({ hostname: 'web-1', os: identity.os, version: '0.1.0' });
  const got = await until('the samples', async () => {
    const d = ok('getAgentMetrics', await owner.get(`/agents/${a.id}/metrics`));
    return d.length === 3 ? d : null;
  });
  expect(got.map((s: { cpuPercent: number }) => s.cpuPercent)).toEqual([30, 20, 10]);
  expect(got[0]).toMatchObject({ diskPercent: 55, swapPercent: null, networkTxBytesPerSecond: 200, disks: [{ mount: '/', percent: 55 }, { mount: '/data', percent: 10 }] });
  // Clamps: limit 0 is 1, the newest; hours past 168 is 168.
  expect(ok('getAgentMetrics', await owner.get(`/agents/${a.id}/metrics?limit=0`)).map((s: { cpuPercent: number }) => s.cpuPercent)).toEqual([30]);
  expect(ok('getAgentMetrics', await owner.get(`/agents/${a.id}/metrics?hours=100000&limit=100000`))).toHaveLength(3);
  // Hourly roll-ups: count, average and maximum per figure (each sample counted once).
  const rollups = await server.db.selectFrom('agent_rollup_hourly').selectAll().where('agent_id', '=', a.id).execute();
  expect(rollups.reduce((n, r) => n + r.samples, 0)).toBe(3);
  const cpu = rollups.map((r) => r.figures.cpuPercent);
  expect(Math.max(...cpu.map((c) => c.max))).toBe(30);
  expect(cpu.reduce((s, c) => s + c.sum, 0) / cpu.reduce((s, c) => s + c.count, 0)).toBe(20);


  // The hourly roll-ups through the API: newest hour first, per figure average, minimum, maximum, sum and count; null when no sample had it.
  const hours = ok('getAgentHourlyMetrics', await owner.get(`/agents/${a.id}/metrics/hourly`));
  expect(hours.reduce((n: number, h: { samples: number }) => n + h.samples, 0)).toBe(3);
  const all = hours.map((h: { cpuPercent: { sum: number; count: number; max: number; min: number } }) => h.cpuPercent);
  expect([Math.min(...all.map((c: { min: number }) => c.min)), Math.max(...all.map((c: { max: number }) => c.max))]).toEqual([10, 30]);
  expect(hours[0]).toMatchObject({ swapPercent: null, networkRxBytes: { sum: 1000 * hours[0].samples, count: hours[0].samples, avg: 1000 } });
  expect(hours[0].hour).toMatch(/T\d\d:00:00\.000Z$/);
  // A clock ten minutes behind is corrected onto the server's.
  const late = new Date(Date.now() - 600_000);
  expect((await report(a.token, { ...identity, sentAt: late.toISOString(), samples: [sample({ at: late.toISOString(), cpuPercent: 99 })] })).status).toBe(200);
  const newest = await until('the corrected sample', async () => {
    const [s] = ok('getAgentMetrics', await owner.get(`/agents/${a.id}/metrics?limit=1`));
    return s.cpuPercent === 99 ? s : null;
  });
  expect(Math.abs(Date.parse(newest.at) - Date.now())).toBeLessThan(30_000);

  // Refusals: no token, someone else's made-up token, malformed figures (400 naming the field), too old.
  expect((await report(null, { ...identity, samples: [sample()] })).status).toBe(401);
  expect((await report(`ag_${'A'.repeat(43)}`, { ...identity, samples: [sample()] })).status).toBe(401);
  const bad = await report(a.token, { ...identity, samples: [sample(), sample({ cpuPercent: 'high' })] });
  expect([bad.status, (await bad.json()).details.field]).toEqual([400, 'samples.1.cpuPercent']);
  expect((await report(a.token, { ...identity, samples: [] })).status).toBe(400);
  const old = await report(a.token, { ...identity, samples: [sample({ at: new Date(Date.now() - 8 * 86_400_000).toISOString() })] });
  expect(await old.json()).toEqual({ accepted: 0, dropped: 1 });
});

test('an agent monitor opens an incident when a sample crosses its threshold, resolves when it returns, goes down when the agent is silent', async () => {
  const a = await enrol(owner, { name: 'disk-box' });
  const elsewhere = await enrol(owner, { name: 'other-ws', workspaceId: ws2 });
  const send = async (diskPercent: number) => expect((await report(a.token, { ...identity, samples: [sample({ diskPercent, disks: [{ mount: '/', filesystem: '/dev/vda', type: 'ext4', sizeBytes: 100, usedBytes: diskPercent, percent: diskPercent }] })] })).status).toBe(200);
  const config = { agentId: a.id, metric: 'diskPercent', threshold: 90, warning: 80, missedReports: 3 };

  // Config checks: an agent of another workspace, a threshold without a metric, a warning on the wrong side.
  const create = (cfg: unknown) => owner.post('/monitors', { name: 'disk', kind: 'agent', workspaceId: ws1, intervalSeconds: 5, config: JSON.stringify(cfg) });
  expect((await create({ ...config, agentId: elsewhere.id })).body.details.field).toBe('config.agentId');
  expect((await create({ agentId: a.id, threshold: 3 })).body.details.field).toBe('config.threshold');
  expect((await create({ ...config, warning: 95 })).body.details.field).toBe('config.warning');
  const probeId = (await createProbe(server.db, organizationId, 'edge')).probeId;
  const onProbe = await owner.post('/monitors', { name: 'disk', kind: 'agent', workspaceId: ws1, probeId, config: JSON.stringify(config) });
  expect([onProbe.status, onProbe.body.details.field]).toEqual([400, 'probeId']);

  await send(50);
  const m = ok('createMonitor', await create(config), 201);
  const monitor = () => owner.get(`/monitors/${m.id}`).then((r) => ok('getMonitor', r));
  await until('up', async () => (await monitor()).status === 'up');

  await send(85);
  expect((await until('degraded', async () => { const x = await monitor(); return x.status === 'degraded' ? x : null; })).lastMessage).toContain('warning');

  await send(95);
  const down = await until('down with an incident', async () => { const x = await monitor(); return x.status === 'down' && x.openIncidentId ? x : null; });
  expect(down.lastMessage).toContain('disk-box: diskPercent 95%');
  const incident = ok('getIncident', await owner.get(`/incidents/${down.openIncidentId}`));
  expect(incident).toMatchObject({ cause: 'assertion_failed', status: 'open' });

  await send(40);
  await until('up again', async () => (await monitor()).status === 'up');
  expect(ok('getIncident', await owner.get(`/incidents/${down.openIncidentId}`)).status).toBe('resolved');

  // Silence: three missed reports of one second (plus slack), seen at the next check (every 5 s).
  const silent = await until('down for silence', async () => { const x = await monitor(); return x.status === 'down' ? x : null; }, 30_000);
  expect(ok('getIncident', await owner.get(`/incidents/${silent.openIncidentId}`)).cause).toBe('heartbeat_missed');
  expect(silent.lastMessage).toContain('No report from agent disk-box');
}, 60_000);

test('samples and roll-ups past the plan retention are deleted by housekeeping, recent ones kept', async () => {
  const a = await enrol(owner, { name: 'retained' });
  expect((await report(a.token, { ...identity, samples: [sample()] })).status).toBe(200);
  const count = async () => Number((await server.db.selectFrom('agent_samples').select((eb) => eb.fn.countAll().as('n')).where('agent_id', '=', a.id).executeTakeFirstOrThrow()).n);
  await until('the sample stored', async () => (await count()) === 1);
  await housekeeping(server.db);
  expect(await count()).toBe(1);
  // Enterprise keeps 1095 days: four years on, both the samples and their roll-ups are gone.
  await housekeeping(server.db, new Date(Date.now() + 4 * 365 * 86_400_000));
  expect(await count()).toBe(0);
  expect(await server.db.selectFrom('agent_rollup_hourly').selectAll().where('agent_id', '=', a.id).execute()).toEqual([]);
});
