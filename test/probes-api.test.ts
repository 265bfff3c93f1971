/**
 * Private probes managed through the API: POST /probes (token once, only its
 * hash stored), PATCH /probes/{id} (rename) and DELETE /probes/{id} (revoke:
 * the token stops working at once) over REST and Connect, with the same
 * refusals, audit entries and secrecy as the CLI's writes they share.
 */
import { createHash } from 'node:crypto';
import { routes } from '../gen/routes';
import { createLogger } from '../src/log';
import { createProbe, revokeProbe } from '../src/domain/probes';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok } from './support/expect';
import { connectCall, type WireRequest } from './support/wire-call';

let srv: TestServer;
const logLines: string[] = [];

beforeAll(async () => {
  // Every log line at debug level is kept, to prove no token reaches the log.
  const log = createLogger('debug', { destination: { write: (s: string) => { logLines.push(s); } } as never });
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', LOG_LEVEL: 'debug' }, { log });
});
afterAll(async () => {
  await srv?.close();
});

async function newOrg() {
  const o = await srv.org({ plan: 'business' });
  return { ...o, api: srv.api(o.apiKey) };
}

/** A probe protocol call with `token`: 200 while the token works, 401 once revoked. */
async function claim(token: string): Promise<number> {
  const res = await fetch(`${srv.url}/probe/v1/claim`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ hostname: 'edge-1', version: '9.9.9' }),
  });
  await res.arrayBuffer();
  return res.status;
}

const route = (op: string) => routes.find((r) => r.operationId === op)!;
const rpc = (op: string, token: string, path: Record<string, string>, body?: unknown, binary = false) =>
  connectCall(srv.url, { route: route(op), token, path, query: {}, body } as WireRequest, binary);

async function auditOf(api: ApiClient, resourceId: string) {
  const entries = ok('listAuditEntries', await api.get('/audit?limit=200')) as any[];
  return entries.filter((e) => e.resourceId === resourceId);
}

const sha256hex = (s: string) => createHash('sha256').update(s).digest('hex');

describe('POST, PATCH and DELETE /probes over REST', () => {
  it('creates a probe whose token works at once, renames it, revokes it: the token stops working, the probe stays listed', async () => {
    const o = await newOrg();
    const created = ok('createProbe', await o.api.post('/probes', { name: '  Office rack  ' }), 201);
    expect(created).toMatchObject({ name: 'Office rack', revoked: false, monitorCount: 0, lastSeenAt: null, hostname: null, version: null });
    expect(created.id).toMatch(/^prb_/);
    expect(created.token).toMatch(/^pr_/);
    // Only the hash is stored.
    const row = await srv.db.selectFrom('probes').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.token);

    expect(await claim(created.token)).toBe(200);
    const listed = (ok('listProbes', await o.api.get('/probes')) as any[]).find((p) => p.id === created.id);
    expect(listed).toMatchObject({ name: 'Office rack', hostname: 'edge-1', version: '9.9.9', revoked: false });
    expect(listed.token).toBeUndefined();
    expect(JSON.stringify(listed)).not.toContain(created.token);

    // A monitor runs on it; revoking leaves the monitor assigned, unchecked, and counted.
    const mon = ok('createMonitor', await o.api.post('/monitors', {
      name: 'Intranet', kind: 'http', workspaceId: o.workspaceId, config: JSON.stringify({ url: 'http://intranet.example.test' }), probeId: created.id,
    }), 201);

    const renamed = ok('updateProbe', await o.api.patch(`/probes/${created.id}`, { name: 'Branch rack' }));
    expect(renamed).toMatchObject({ id: created.id, name: 'Branch rack', revoked: false, monitorCount: 1 });
    expect(renamed.token).toBeUndefined();
    expect(await claim(created.token)).toBe(200);

    const revoked = ok('revokeProbe', await o.api.delete(`/probes/${created.id}`));
    expect(revoked).toMatchObject({ id: created.id, name: 'Branch rack', revoked: true, monitorCount: 1 });
    expect(await claim(created.token)).toBe(401);
    // Idempotent: the same answer, no second audit entry.
    expect(ok('revokeProbe', await o.api.delete(`/probes/${created.id}`))).toEqual(revoked);
    expect((ok('listProbes', await o.api.get('/probes')) as any[]).find((p) => p.id === created.id)).toMatchObject({ revoked: true, name: 'Branch rack' });
    expect(ok('getMonitor', await o.api.get(`/monitors/${mon.id}`)).probeId).toBe(created.id);
    const refused = await o.api.post('/monitors', { name: 'Late', kind: 'http', workspaceId: o.workspaceId, config: JSON.stringify({ url: 'http://x.example.test' }), probeId: created.id });
    expect(refused.status).toBe(400);
    expect(refused.body.details.field).toBe('probeId');
    // A revoked probe may still be renamed.
    expect(ok('updateProbe', await o.api.patch(`/probes/${created.id}`, { name: 'Old rack' }))).toMatchObject({ name: 'Old rack', revoked: true });

    const entries = await auditOf(o.api, created.id);
    expect(entries.map((e) => e.action).reverse()).toEqual(['probe.created', 'probe.updated', 'probe.revoked', 'probe.updated']);
    expect(entries.find((e) => e.action === 'probe.created').changes).toEqual({ name: { from: null, to: 'Office rack' } });
    expect(entries.find((e) => e.action === 'probe.revoked').changes).toEqual({ revoked: { from: false, to: true } });
    expect(entries.every((e) => e.resourceType === 'probe' && e.workspaceId === null)).toBe(true);
    const text = JSON.stringify(entries);
    expect(text).not.toContain(created.token);
    expect(text).not.toContain(sha256hex(created.token));
    expect(text).not.toMatch(/token/i);
  });

  it('never shows the token again: not in the log, the audit export, the search or the list', async () => {
    const o = await newOrg();
    const created = ok('createProbe', await o.api.post('/probes', { name: 'Secretive probe' }), 201);
    const hits = ok('searchResources', await o.api.get('/search?q=Secretive'));
    expect(JSON.stringify(hits)).toContain(created.id);
    const exported = await fetch(`${srv.url}/api/v1/export/audit-log?format=json`, { headers: { authorization: `Bearer ${o.apiKey}` } });
    expect(exported.status).toBe(200);
    const file = await exported.text();
    expect(file).toContain('probe.created');
    expect(logLines.length).toBeGreaterThan(0);
    for (const text of [JSON.stringify(hits), file, JSON.stringify(ok('listProbes', await o.api.get('/probes'))), logLines.join('\n')]) {
      expect(text).not.toContain(created.token);
      expect(text).not.toContain(sha256hex(created.token));
    }
  });

  it('refuses bad input with stable codes naming the field', async () => {
    const o = await newOrg();
    const cases: [string, Promise<any>, string, string][] = [
      ['blank name', o.api.post('/probes', { name: '   ' }), 'invalid_field', 'name'],
      ['no name', o.api.post('/probes', {}), 'missing_field', 'name'],
      ['long name', o.api.post('/probes', { name: 'x'.repeat(101) }), 'invalid_field', 'name'],
      ['name not a string', o.api.post('/probes', { name: 7 }), 'invalid_field', 'name'],
      ['unknown field', o.api.post('/probes', { name: 'x', region: 'eu' }), 'unknown_field', 'region'],
    ];
    const p = ok('createProbe', await o.api.post('/probes', { name: 'Valid' }), 201);
    cases.push(['blank rename', o.api.patch(`/probes/${p.id}`, { name: ' ' }), 'invalid_field', 'name']);
    cases.push(['empty rename', o.api.patch(`/probes/${p.id}`, {}), 'missing_field', 'name']);
    for (const [what, res, code, field] of cases) {
      const r = await res;
      expect({ what, status: r.status, code: r.body.code, field: r.body.details?.field }).toEqual({ what, status: 400, code: expect.any(String), field });
      if (code !== 'missing_field' && code !== 'unknown_field') expect({ what, code: r.body.code }).toEqual({ what, code });
    }
    expect((ok('listProbes', await o.api.get('/probes')) as any[]).map((x) => x.name)).toEqual(['Valid']);
  });

  it('another organisation\'s probe and a made-up one do not exist (404 alike)', async () => {
    const a = await newOrg();
    const b = await newOrg();
    const p = ok('createProbe', await a.api.post('/probes', { name: 'A probe' }), 201);
    for (const id of [p.id, 'prb_doesnotexist0000000000']) {
      for (const res of [await b.api.patch(`/probes/${id}`, { name: 'taken' }), await b.api.delete(`/probes/${id}`)]) {
        expect({ status: res.status, code: res.body.code, field: res.body.details?.field }).toEqual({ status: 404, code: 'not_found', field: 'id' });
      }
    }
    expect(await claim(p.token)).toBe(200);
    expect((ok('listProbes', await a.api.get('/probes')) as any[])[0]).toMatchObject({ name: 'A probe', revoked: false });
  });
});

describe('who may manage probes', () => {
  it('a viewer reads probes but is refused every change, naming the permission', async () => {
    const o = await newOrg();
    const p = ok('createProbe', await o.api.post('/probes', { name: 'Rack' }), 201);
    const viewer = srv.api((await srv.member(o.organizationId, 'viewer')).apiKey);
    expect((ok('listProbes', await viewer.get('/probes')) as any[]).map((x) => x.id)).toEqual([p.id]);
    const refused: [string, any, string][] = [
      ['create', await viewer.post('/probes', { name: 'Mine' }), 'agent:enroll'],
      ['rename', await viewer.patch(`/probes/${p.id}`, { name: 'Mine' }), 'agent:enroll'],
      ['revoke', await viewer.delete(`/probes/${p.id}`), 'agent:delete'],
    ];
    for (const [what, res, permission] of refused) {
      expect({ what, status: res.status, permission: res.body.vars?.permission }).toEqual({ what, status: 403, permission });
    }
    expect(await claim(p.token)).toBe(200);
    expect((ok('listProbes', await o.api.get('/probes')) as any[]).map((x) => [x.name, x.revoked])).toEqual([['Rack', false]]);
  });

  it('a key confined to workspaces sees probes but any change is 403 workspace_confined (probes belong to the organisation)', async () => {
    const o = await newOrg();
    const p = ok('createProbe', await o.api.post('/probes', { name: 'Rack' }), 201);
    const m = await srv.member(o.organizationId, 'admin', [o.workspaceId]);
    const confined = srv.api(m.apiKey);
    expect((ok('listProbes', await confined.get('/probes')) as any[]).map((x) => x.id)).toEqual([p.id]);
    const refused: [string, any, string][] = [
      ['create', await confined.post('/probes', { name: 'Mine' }), 'agent:enroll'],
      ['rename', await confined.patch(`/probes/${p.id}`, { name: 'Mine' }), 'agent:enroll'],
      ['revoke', await confined.delete(`/probes/${p.id}`), 'agent:delete'],
    ];
    for (const [what, res, permission] of refused) {
      expect({ what, status: res.status, code: res.body.code, permission: res.body.vars?.permission }).toEqual({ what, status: 403, code: 'workspace_confined', permission });
    }
    // A made-up id is still 404 for it.
    expect((await confined.delete('/probes/prb_doesnotexist0000000000')).status).toBe(404);
    expect(await claim(p.token)).toBe(200);
    expect((ok('listProbes', await o.api.get('/probes')) as any[]).map((x) => [x.name, x.revoked])).toEqual([['Rack', false]]);
  });
});

describe('over Connect (JSON and binary protobuf)', () => {
  it.each([false, true])('creates, renames and revokes (binary %s)', async (binary) => {
    const o = await newOrg();
    const created = await rpc('createProbe', o.apiKey, {}, { name: 'Connect probe' }, binary);
    expect(created.code).toBeUndefined();
    const probe = created.json.data;
    // Protobuf's JSON leaves out false and zero (`revoked`, `monitorCount`): absent means the default.
    expect(probe).toMatchObject({ name: 'Connect probe' });
    expect([probe.revoked ?? false, probe.monitorCount ?? 0]).toEqual([false, 0]);
    expect(probe.token).toMatch(/^pr_/);
    expect(await claim(probe.token)).toBe(200);

    const renamed = await rpc('updateProbe', o.apiKey, { id: probe.id }, { name: 'Renamed' }, binary);
    expect(renamed.json.data).toMatchObject({ id: probe.id, name: 'Renamed' });
    expect(renamed.json.data.token).toBeUndefined();

    const bad = await rpc('updateProbe', o.apiKey, { id: probe.id }, { name: '  ' }, binary);
    expect({ status: bad.status, code: bad.code, field: (bad.details as any)?.field }).toEqual({ status: 400, code: 'invalid_field', field: 'name' });

    const viewer = (await srv.member(o.organizationId, 'viewer')).apiKey;
    const denied = await rpc('revokeProbe', viewer, { id: probe.id }, undefined, binary);
    expect({ status: denied.status, permission: denied.vars?.permission }).toEqual({ status: 403, permission: 'agent:delete' });
    const confined = (await srv.member(o.organizationId, 'member', [o.workspaceId])).apiKey;
    const walled = await rpc('createProbe', confined, {}, { name: 'x' }, binary);
    expect({ status: walled.status, code: walled.code }).toEqual({ status: 403, code: 'workspace_confined' });

    const revoked = await rpc('revokeProbe', o.apiKey, { id: probe.id }, undefined, binary);
    expect(revoked.json.data).toMatchObject({ id: probe.id, revoked: true });
    expect(await claim(probe.token)).toBe(401);
  });
});

describe('the CLI goes through the same writes', () => {
  it('creates and revokes with an audit entry by the operator, never the token', async () => {
    const o = await newOrg();
    const { probeId, token } = await createProbe(srv.db, o.organizationId, 'From the shell');
    expect(await claim(token)).toBe(200);
    await revokeProbe(srv.db, probeId);
    expect(await claim(token)).toBe(401);
    await expect(revokeProbe(srv.db, probeId)).rejects.toThrow(/no active probe/);
    await expect(createProbe(srv.db, o.organizationId, ' ')).rejects.toThrow(/name/);
    const entries = await auditOf(o.api, probeId);
    expect(entries.map((e) => [e.action, e.actor.type])).toEqual([['probe.revoked', 'system'], ['probe.created', 'system']]);
    expect(JSON.stringify(entries)).not.toContain(token);
  });
});
