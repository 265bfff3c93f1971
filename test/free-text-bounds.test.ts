/**
 * Every string a client may send is bounded. The contract (openapi.yaml,
 * parsed here) gives every string of every JSON request body, query
 * parameter and header parameter a `maxLength` (or an enum, or an anchored
 * pattern that cannot grow), and the server refuses one character more with
 * 400 naming the field in `details.field`: each operation is sent, field by
 * field, a plausible body with that one value one character over its
 * maximum. The endpoints outside the contract that store text (agent
 * reports, the probe protocol) refuse over-long text alike, and a ping's
 * body, which is dropped, is held to its small size limit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { routes, type RouteDef } from '../gen/routes';
import { bodyValidators } from '../gen/validators.cjs';
import { createProbe } from '../src/domain/probes';
import { hashPassword } from '../src/crypto/passwords';
import { startTestServer, ApiClient, type TestServer } from './support/harness';
import {
  bodySchema, operationOf, pathOf, patternBounds, plausible, resolveSchema, seedOrganization, stringFields,
  type Schema, type Seeded, type Spec, type StringField,
} from './support/contract';

const spec = parse(fs.readFileSync(path.join(__dirname, '..', 'openapi.yaml'), 'utf8'), { maxAliasCount: -1 }) as Spec;

/** The parameters (query, header) of a route, resolved. */
const paramsOf = (r: RouteDef) => (operationOf(spec, r)?.parameters ?? []).filter((p) => p.in !== 'path');

const bounded = (s: Schema) => s.maxLength !== undefined || (s.enum?.length ?? 0) > 0 || patternBounds(s.pattern);

test('every string of every request body, query parameter and header parameter has a maximum length in the contract', () => {
  const unbounded: string[] = [];
  for (const r of routes) {
    for (const p of paramsOf(r)) {
      for (const f of stringFields(spec, p.schema)) if (!bounded(f.schema)) unbounded.push(`${r.operationId} ${p.in} ${p.name}`);
    }
    for (const [type, media] of Object.entries(operationOf(spec, r)?.requestBody?.content ?? {})) {
      for (const f of stringFields(spec, media.schema)) if (!bounded(f.schema)) unbounded.push(`${r.operationId} body (${type}) ${f.path.join('.') || '(whole)'}`);
    }
  }
  expect(unbounded).toEqual([]);
});

let server: TestServer;
let seeded: Seeded;
let session: ApiClient;
let anonymous: ApiClient;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000', RATE_LIMIT_EXPORT: '1000000', RATE_LIMIT_SOURCEMAPS: '1000000', RATE_LIMIT_SYMBOLS: '1000000' });
  seeded = await seedOrganization(server);
  const user = await server.db.selectFrom('users').select('email').where('id', '=', seeded.userId).executeTakeFirstOrThrow();
  await server.db.updateTable('users').set({ password_hash: await hashPassword('a good long password') }).where('id', '=', seeded.userId).execute();
  anonymous = server.api(null);
  const signedIn = await anonymous.post('/sessions', { email: user.email, password: 'a good long password' });
  expect(signedIn.status).toBe(201);
  session = server.api(signedIn.body.data.token);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

/** The client an operation is called with: none for the public ones, a session for the session-only ones, else the owner's key. */
const clientFor = (r: RouteDef) => (r.anonymous ? anonymous : r.sessionOnly ? session : seeded.owner);

/** One character over the field's maximum (a made-up string: the maximum alone refuses it). */
const overLong = (s: Schema) => 'x'.repeat((s.maxLength ?? 0) + 1);

/** `base` with the value at `at` replaced by `value`, the rest made plausible (a list gets one item holding it). */
function withValue(schema: Schema | undefined, base: unknown, at: string[], value: unknown): unknown {
  if (at.length === 0) return value;
  const s = resolveSchema(spec, schema);
  const branch = s?.oneOf?.find((b) => resolveSchema(spec, b)?.type !== 'null') ?? s?.anyOf?.[0];
  if (branch && !s?.properties && !s?.items) return withValue(branch, base, at, value);
  const [head, ...rest] = at;
  if (head === '*') return [withValue(s?.items, plausible(spec, seeded.ids, s?.items, 'item'), rest, value)];
  const obj = base && typeof base === 'object' && !Array.isArray(base) ? base as Record<string, unknown> : {};
  const child = s?.properties?.[head];
  return { ...obj, [head]: withValue(child, obj[head] ?? plausible(spec, seeded.ids, child, head), rest, value) };
}

/** The dotted field the server names for a path (`steps.0.targetId`). */
const fieldOf = (f: StringField) => f.path.map((p) => (p === '*' ? '0' : p)).join('.');

test('each operation refuses a value one character over its maximum, field by field, with 400 naming the field', async () => {
  const wrong: string[] = [];
  let sent = 0;
  for (const r of routes) {
    const client = clientFor(r);
    const url = pathOf(r, seeded.ids);
    // Query parameters, one at a time.
    for (const p of paramsOf(r).filter((x) => x.in === 'query')) {
      const s = resolveSchema(spec, p.schema);
      if (!s || s.maxLength === undefined) continue;
      // The other required parameters plausible (search's `q`), this one over-long.
      const others = paramsOf(r).filter((x) => x.in === 'query' && x.required && x.name !== p.name)
        .map((x) => `${x.name}=${encodeURIComponent(String(plausible(spec, seeded.ids, x.schema, x.name)))}&`).join('');
      const res = await client.request(r.method, `${url}?${others}${p.name}=${overLong(s)}`, r.body === 'required' && !r.rawRequest ? {} : undefined);
      sent++;
      if (res.status !== 400 || res.body?.details?.field !== p.name) wrong.push(`${r.operationId} query ${p.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    if (r.rawRequest || r.body === 'none') continue;
    const schema = bodySchema(spec, r);
    const base = plausible(spec, seeded.ids, schema, r.operationId) ?? {};
    // The plausible body itself passes the contract (a change that must name a field aside): a refusal below is the over-long value's.
    if (!schema?.minProperties && !bodyValidators[r.operationId](base)) wrong.push(`${r.operationId}: the plausible body ${JSON.stringify(base)} is refused (${JSON.stringify(bodyValidators[r.operationId].errors).slice(0, 200)})`);
    for (const f of stringFields(spec, schema)) {
      if (f.schema.maxLength === undefined || f.path.length === 0 || f.path.includes('<key>')) continue;
      const body = withValue(schema, base, f.path, overLong(f.schema));
      const res = await client.request(r.method, url, body);
      sent++;
      if (res.status !== 400 || res.body?.details?.field !== fieldOf(f)) {
        wrong.push(`${r.operationId} ${fieldOf(f)} (max ${f.schema.maxLength}): ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
    }
  }
  expect(wrong).toEqual([]);
  expect(sent).toBeGreaterThan(100);
}, 300_000);

test('a raw upload\'s header parameters are held to their maxima too', async () => {
  const upload = (headers: Record<string, string>) => fetch(`${server.url}/api/v1/symbols`, {
    method: 'POST', body: Buffer.from('x'),
    headers: { authorization: `Bearer ${seeded.owner.key}`, 'content-type': 'application/octet-stream', 'x-service-project-ref': '1', 'x-service-platform': 'ios', 'x-service-symbol-name': 'App', ...headers },
  });
  for (const [header, max] of [['X-Service-Symbol-Name', 255], ['X-Service-Release', 250], ['X-Service-Debug-Ids', 4096]] as const) {
    const res = await upload({ [header.toLowerCase()]: 'x'.repeat(max + 1) });
    expect(res.status).toBe(400);
    expect((await res.json()).details.field).toBe(header);
  }
});

test('the issue\'s cases: a 5,000,000-character comment, a 7,000,000-character clientReference (REST and Connect)', async () => {
  const { owner, ids } = seeded;
  const created = await owner.post('/workspaces', { name: 'Bounds', clientReference: 'x'.repeat(7_000_000) });
  expect(created).toMatchObject({ status: 400, body: { code: 'invalid_field', details: { field: 'clientReference' } } });
  const updated = await owner.patch(`/workspaces/${ids.workspace}`, { name: 'Default', clientReference: 'x'.repeat(201) });
  expect(updated).toMatchObject({ status: 400, body: { details: { field: 'clientReference' } } });
  expect((await owner.patch(`/workspaces/${ids.workspace}`, { name: 'Default', clientReference: 'x'.repeat(200) })).status).toBe(200);
  // Through Connect: invalid_argument, the same error body in its metadata.
  const rpc = await fetch(`${server.url}/rpc/vigil.v1.WorkspaceService/CreateWorkspace`, {
    method: 'POST', headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bounds', clientReference: 'x'.repeat(201) }),
  });
  expect(rpc.status).toBe(400);
  expect((await rpc.json()).code).toBe('invalid_argument');
  expect(JSON.parse(rpc.headers.get('vigil-error') ?? '{}').details.field).toBe('clientReference');

  const incident = await server.db.insertInto('incidents').values({
    id: 'inc_boundsboundsboundsbou', organization_id: seeded.organizationId, workspace_id: ids.workspace, monitor_id: ids.monitor, title: 'Bounds',
    cause: 'timeout', severity: 'critical', status: 'open', root_incident_id: null,
  }).returning('id').executeTakeFirstOrThrow();
  const comment = await owner.patch(`/incidents/${incident.id}`, { comment: 'x'.repeat(5_000_000) });
  expect(comment).toMatchObject({ status: 400, body: { code: 'invalid_field', details: { field: 'comment' } } });
  expect((await owner.patch(`/incidents/${incident.id}`, { comment: 'x'.repeat(10_000) })).status).toBe(200);
  const events = await owner.get(`/incidents/${incident.id}/events`);
  expect(events.body.data.filter((e: { kind: string }) => e.kind === 'comment')).toHaveLength(1);
});

test('agent reports and the probe protocol refuse over-long text naming the field (a check\'s message is cut); a ping body is held to 100 KiB', async () => {
  const { outside } = seeded;
  const report = (extra: Record<string, unknown>, sample: Record<string, unknown> = {}) => fetch(`${server.url}/agent/v1/report`, {
    method: 'POST', headers: { authorization: `Bearer ${outside.agentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ hostname: 'db-1', os: 'Linux', version: '0.1.0', ...extra, samples: [{ at: new Date().toISOString(), cpuPercent: 1, ...sample }] }),
  });
  for (const [field, max] of [['hostname', 255], ['os', 255], ['version', 64]] as const) {
    const res = await report({ [field]: 'x'.repeat(max + 1) });
    expect(res.status).toBe(400);
    expect((await res.json()).details.field).toBe(field);
  }
  const hostname = await report({ hostname: 'x'.repeat(1_000_000) });
  expect(hostname.status).toBe(400);
  for (const [field, max] of [['mount', 255], ['filesystem', 255], ['type', 64]] as const) {
    const disk = { mount: '/', filesystem: '/dev/sda1', type: 'ext4', sizeBytes: 10, usedBytes: 1, percent: 10, [field]: 'x'.repeat(max + 1) };
    const res = await report({}, { disks: [disk] });
    expect(res.status).toBe(400);
    expect((await res.json()).details.field).toBe(`samples.0.disks.0.${field}`);
  }
  const fine = await report({ hostname: 'x'.repeat(255) });
  expect(fine.status).toBe(200);

  const { token, probeId } = await createProbe(server.db, seeded.organizationId, 'bounds');
  const probed = await seeded.owner.post('/monitors', { name: 'Probed', kind: 'http', workspaceId: seeded.ids.workspace, probeId, config: JSON.stringify({ url: 'https://example.com/' }) });
  expect(probed.status).toBe(201);
  const probe = (p: string, body: unknown) => fetch(`${server.url}/probe/v1${p}`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  for (const [field, max] of [['hostname', 255], ['version', 64]] as const) {
    const res = await probe('/claim', { hostname: 'probe-1', version: '0.1.0', max: 1, [field]: 'x'.repeat(max + 1) });
    expect(res.status).toBe(400);
    expect((await res.json()).details.field).toBe(field);
  }
  const result = (r: Record<string, unknown>) => probe('/results', { results: [{ monitorId: probed.body.data.id, result: { outcome: 'down', cause: 'timeout', message: 'timed out', responseTimeMs: null, ...r } }] });
  const cause = await result({ cause: 'x'.repeat(65) });
  expect(cause.status).toBe(400);
  expect((await cause.json()).details.field).toBe('results.0.result.cause');
  const detail = await result({ detail: { findings: [{ code: 'x', severity: 'info', message: 'x'.repeat(70_000) }] } });
  expect(detail.status).toBe(400);
  expect((await detail.json()).details.field).toBe('results.0.result.detail');
  // A check's message is the outside world's words: cut to 1,000 characters, as the server's own checks are.
  expect((await result({ message: 'x'.repeat(2_000_000) })).status).toBe(200);
  const stored = await server.db.selectFrom('monitors').select('last_message').where('id', '=', probed.body.data.id).executeTakeFirstOrThrow();
  expect(stored.last_message).toHaveLength(1000);

  // A ping's body is read and dropped: over its 100 KiB limit it is refused before it is read whole.
  const ping = await fetch(outside.pingUrl, { method: 'POST', body: 'x'.repeat(100 * 1024 + 1) });
  expect(ping.status).toBe(413);
  expect((await fetch(outside.pingUrl, { method: 'POST', body: 'x'.repeat(1000) })).status).toBe(200);
});
