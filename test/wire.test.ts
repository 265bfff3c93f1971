import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import {
  CreateMonitorRequestSchema, CreateMonitorResponseSchema, GetMonitorResponseSchema, ListMonitorsResponseSchema,
  MonitorService, UpdateMonitorRequestSchema,
} from '../gen/proto/vigil/v1/monitors_pb';
import { WorkspaceService } from '../gen/proto/vigil/v1/workspaces_pb';
import { AuditService, ListAuditEntriesResponseSchema } from '../gen/proto/vigil/v1/audit_pb';
import { startTestServer, type TestServer } from './support/harness';
import { ROOT, tempDir } from './support/child';

// One handler behind every wire format: REST JSON, REST protobuf (gzip both
// ways) and Connect (binary and JSON) give the same data and the same errors.

let server: TestServer;
let key: string;
let workspaceId: string;
let monitorId: string;
const PB = 'application/x-protobuf';

async function raw(path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${key}`);
  const res = await fetch(`${server.url}${path}`, { ...init, headers });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  ({ apiKey: key, workspaceId } = await server.org());
  const created = await server.api(key).post('/monitors', {
    name: 'API', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://api.example.test/health' }), tags: ['Prod'],
  });
  expect(created.status).toBe(201);
  monitorId = created.body.data.id;
});
afterAll(() => server.close());

describe('REST conventions', () => {
  test('every response of the API, errors included, has Vary and Cache-Control', async () => {
    // (A path outside the server's own prefixes is the web app's: its index.html is `no-cache`, test/web-serving.test.ts.)
    for (const path of ['/api/v1/monitors', '/api/v1/nope', '/api/no-such-route', '/ping/no/such/route', '/openapi.json']) {
      const { res } = await raw(path);
      expect(res.headers.get('vary')).toBe('Accept, Content-Type');
      expect(res.headers.get('cache-control')).toBe('private, no-store');
    }
  });

  test('unknown routes are JSON 404 with the error body', async () => {
    const { res, bytes } = await raw('/api/v1/definitely/not/here');
    expect(res.status).toBe(404);
    const body = JSON.parse(Buffer.from(bytes).toString());
    expect(body).toEqual({ error: expect.any(String), code: 'not_found', vars: expect.any(Object), details: null });
  });

  test('a body that is not JSON is 400 invalid_json naming the body', async () => {
    const r = await server.api(key).post('/monitors', '{"name": ', { 'content-type': 'application/json' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_json');
    expect(r.body.details.field).toBe('body');
  });

  test('wrong types and unknown enum values are 400 with the field named', async () => {
    const api = server.api(key);
    const wrongType = await api.post('/monitors', { name: 5, kind: 'http', workspaceId, config: '{}' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.details.field).toBe('name');
    const badEnum = await api.post('/monitors', { name: 'x', kind: 'carrier_pigeon', workspaceId, config: '{}' });
    expect(badEnum.status).toBe(400);
    expect(badEnum.body.details.field).toBe('kind');
    const missing = await api.post('/monitors', { kind: 'http', workspaceId, config: '{}' });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('missing_field');
    expect(missing.body.details.fields.map((f: { field: string }) => f.field)).toContain('name');
  });

  test('a gzip request body is accepted and a gzip response is given when accepted', async () => {
    const body = zlib.gzipSync(JSON.stringify({ name: 'Zipped', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://z.example.test' }) }));
    const { res } = await raw('/api/v1/monitors', { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect(res.status).toBe(201);
    const got = await new Promise<{ enc: string | undefined; text: string }>((resolve, reject) => {
      // fetch decompresses transparently, so read the raw bytes with node:http.
      require('node:http').get(`${server.url}/api/v1/monitors/${monitorId}`, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' } }, (r: any) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ enc: r.headers['content-encoding'], text: zlib.gunzipSync(Buffer.concat(chunks)).toString() }));
      }).on('error', reject);
    });
    expect(got.enc).toBe('gzip');
    expect(JSON.parse(got.text).data.id).toBe(monitorId);
  });
});

describe('protobuf', () => {
  test('Accept: application/x-protobuf answers the response message; empty fields are absent, not null', async () => {
    const { res, bytes } = await raw(`/api/v1/monitors/${monitorId}`, { headers: { accept: PB } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(PB);
    const msg = fromBinary(GetMonitorResponseSchema, bytes);
    expect(msg.data?.id).toBe(monitorId);
    expect(msg.data?.tags).toEqual(['prod']);
    expect(msg.data?.lastCheckedAt).toBeUndefined();
    expect(msg.data?.lastMessage).toBeUndefined();
    expect(msg.data?.workspace?.id).toBe(workspaceId);
    const json = await server.api(key).get(`/monitors/${monitorId}`);
    expect(json.body.data.lastMessage).toBeNull();
    expect(json.body.data.lastCheckedAt).toBeNull();
  });

  test('a protobuf request body is decoded and answered in protobuf', async () => {
    const req = create(CreateMonitorRequestSchema, {
      name: 'Proto', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://p.example.test' }), tags: ['A', 'b'], intervalSeconds: 600,
    });
    const { res, bytes } = await raw('/api/v1/monitors', { method: 'POST', body: toBinary(CreateMonitorRequestSchema, req), headers: { 'content-type': PB } });
    expect(res.status).toBe(201);
    const out = fromBinary(CreateMonitorResponseSchema, bytes);
    expect(out.data?.name).toBe('Proto');
    expect(out.data?.tags).toEqual(['a', 'b']);
    expect(out.data?.intervalSeconds).toBe(600);
  });

  test('StringList: absent leaves tags alone, an empty list clears them', async () => {
    const id = (await server.api(key).post('/monitors', { name: 'T', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://t.example.test' }), tags: ['x'] })).body.data.id;
    const rename = create(UpdateMonitorRequestSchema, { name: 'T2' });
    await raw(`/api/v1/monitors/${id}`, { method: 'PATCH', body: toBinary(UpdateMonitorRequestSchema, rename), headers: { 'content-type': PB } });
    expect((await server.api(key).get(`/monitors/${id}`)).body.data.tags).toEqual(['x']);
    const clear = create(UpdateMonitorRequestSchema, { tags: { values: [] } });
    const { res } = await raw(`/api/v1/monitors/${id}`, { method: 'PATCH', body: toBinary(UpdateMonitorRequestSchema, clear), headers: { 'content-type': PB } });
    expect(res.status).toBe(200);
    expect((await server.api(key).get(`/monitors/${id}`)).body.data.tags).toEqual([]);
  });

  test('the list decodes as the list message', async () => {
    const { bytes } = await raw('/api/v1/monitors?tag=prod', { headers: { accept: PB } });
    const list = fromBinary(ListMonitorsResponseSchema, bytes);
    expect(list.data.map((m) => m.id)).toContain(monitorId);
  });

  test('errors stay JSON error bodies under Accept: protobuf', async () => {
    const { res, bytes } = await raw('/api/v1/monitors/mon_missing', { headers: { accept: PB } });
    expect(res.status).toBe(404);
    expect(JSON.parse(Buffer.from(bytes).toString()).code).toBe('not_found');
  });

  test('a body that is not the message is 400', async () => {
    const { res } = await raw('/api/v1/monitors', { method: 'POST', body: new Uint8Array([0xff, 0xff, 0xff]), headers: { 'content-type': PB } });
    expect(res.status).toBe(400);
  });
});

describe('Connect', () => {
  const client = <T extends typeof MonitorService | typeof WorkspaceService>(svc: T, useBinaryFormat: boolean, token = key) =>
    createClient(svc, createConnectTransport({
      baseUrl: `${server.url}/rpc`, httpVersion: '1.1', useBinaryFormat,
      interceptors: [(next) => (req) => { req.header.set('authorization', `Bearer ${token}`); return next(req); }],
    }));

  test.each([true, false])('the same handler answers over Connect (binary=%s)', async (binary) => {
    const monitors = client(MonitorService, binary);
    const got = await monitors.getMonitor({ id: monitorId });
    expect(got.data?.id).toBe(monitorId);
    const list = await monitors.listMonitors({ tag: 'PROD' });
    expect(list.data.map((m) => m.id)).toContain(monitorId);
    const ws = await client(WorkspaceService, binary).listWorkspaces({});
    expect(ws.data[0].isDefault).toBe(true);
  });

  test('Connect goes through the same auth and tenancy', async () => {
    await expect(client(MonitorService, true, 'vk_nope').getMonitor({ id: monitorId })).rejects.toMatchObject({ code: Code.Unauthenticated });
    const other = await server.org();
    const err = await client(MonitorService, true, other.apiKey).getMonitor({ id: monitorId }).catch((e) => e as ConnectError);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((err as ConnectError).metadata.get('vigil-error-code')).toBe('not_found');
  });

  test('Connect writes go through permission checks', async () => {
    const viewer = await server.member((await server.db.selectFrom('workspaces').select('organization_id').where('id', '=', workspaceId).executeTakeFirstOrThrow()).organization_id, 'viewer');
    const err = await client(MonitorService, false, viewer.apiKey).deleteMonitor({ id: monitorId }).catch((e) => e as ConnectError);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    expect((err as ConnectError).rawMessage).toContain('monitor:delete');
  });
});

describe('published contract', () => {
  test('GET /openapi.json is the contract, version 1', async () => {
    const { res, bytes } = await raw('/openapi.json');
    const doc = JSON.parse(Buffer.from(bytes).toString());
    expect(res.status).toBe(200);
    expect(doc.info.version).toBe('1');
    expect(doc.paths['/monitors/{id}'].get['x-permission']).toBe('monitor:read');
  });

  test('GET /api/proto lists the .proto files by import path, each downloadable there', async () => {
    const { bytes } = await raw('/api/proto');
    const list = JSON.parse(Buffer.from(bytes).toString()).data as { name: string; path: string; url: string }[];
    expect(list).toEqual(expect.arrayContaining([
      { name: 'monitors.proto', path: 'vigil/v1/monitors.proto', package: 'vigil.v1', url: `${server.url}/api/proto/vigil/v1/monitors.proto` },
    ]));
    const res = await fetch(list.find((f) => f.name === 'monitors.proto')!.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('service MonitorService');
    expect((await fetch(`${server.url}/api/proto/monitors.proto`)).status).toBe(200);
    expect((await fetch(`${server.url}/api/proto/vigil/v1/nothing.proto`)).status).toBe(404);
  });

  test('the served protos, saved at their listed paths, build with buf generate as they are', async () => {
    const list = (await (await fetch(`${server.url}/api/proto`)).json()).data as { path: string; url: string }[];
    const dir = tempDir('vigil-protos-');
    try {
      for (const f of list) {
        fs.mkdirSync(path.join(dir, path.dirname(f.path)), { recursive: true });
        fs.writeFileSync(path.join(dir, f.path), await (await fetch(f.url)).text());
      }
      fs.writeFileSync(path.join(dir, 'buf.gen.yaml'), `version: v2\nplugins:\n  - local: ${path.join(ROOT, 'node_modules/.bin/protoc-gen-es')}\n    out: out\n    opt: [target=ts]\n`);
      execFileSync(path.join(ROOT, 'node_modules/.bin/buf'), ['generate'], { cwd: dir, stdio: 'pipe' });
      expect(fs.existsSync(path.join(dir, 'out/vigil/v1/monitors_pb.ts'))).toBe(true);
      expect(fs.readFileSync(path.join(dir, 'out/vigil/v1/monitors_pb.ts'), 'utf8')).toContain('MonitorService');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('JSON-carrying fields (google.protobuf.Struct)', () => {
  test('audit changes are the same object over JSON, protobuf and Connect', async () => {
    const api = server.api(key);
    expect((await api.patch(`/monitors/${monitorId}`, { name: 'Audited rename' })).status).toBe(200);
    const json = (await api.get('/audit')).body.data as { id: string; changes: unknown }[];
    const entry = json.find((e) => (e.changes as Record<string, unknown> | null)?.name);
    expect(entry).toBeDefined();
    const { res, bytes } = await raw('/api/v1/audit', { headers: { accept: PB } });
    expect(res.headers.get('content-type')).toBe(PB);
    const pb = fromBinary(ListAuditEntriesResponseSchema, bytes).data.find((e) => e.id === entry!.id);
    expect(pb?.changes).toEqual(entry!.changes);
    for (const binary of [true, false]) {
      const audit = createClient(AuditService, createConnectTransport({
        baseUrl: `${server.url}/rpc`, httpVersion: '1.1', useBinaryFormat: binary, interceptors: [(next) => (req) => { req.header.set('authorization', `Bearer ${key}`); return next(req); }],
      }));
      const viaConnect = (await audit.listAuditEntries({})).data.find((e) => e.id === entry!.id);
      expect(viaConnect?.changes).toEqual(entry!.changes);
    }
  });
});
