/**
 * The agent server at POST /mcp, through the SDK's own Client and
 * StreamableHTTPClientTransport: exactly the tools the spec names (every GET
 * outside workspaces, members, API keys, status pages and the account, plus
 * three monitor writes), each call the same request the key would make
 * directly (permission, tenant filter, audit entry), and the rate limit
 * spent twice per call.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { parse } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { agentPermissions, contractTools, spansExcludedAreas } from '../src/mcp/tools';
import { ok } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { callTool, connectAgent } from './support/mcp';

/** The tools the spec calls for, computed from the contract's source, not from the server's code. */
function expectedTools(): Set<string> {
  const doc = parse(fs.readFileSync(path.join(__dirname, '..', 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { operationId: string; tags: string[] }>> };
  // Spec: "No tool exists for workspaces, members, API keys, status pages or the account" (sessions: the account's sign-in);
  // GET /me is the key describing itself, listed apart from the account ("account, billing, me"): a tool.
  const excluded = new Set(['workspaces', 'members', 'api_keys', 'status_pages', 'account', 'sessions']);
  const writes = new Set(['post /monitors', 'patch /monitors/{id}', 'delete /monitors/{id}']);
  const out = new Set<string>();
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!op?.operationId || (op.tags.some((t) => excluded.has(t)) && op.operationId !== 'getMe')) continue;
      // The event stream never ends: no tool call could return it.
      if (op.operationId === 'streamEvents') continue;
      if (method === 'get' || writes.has(`${method} ${p}`)) out.add(op.operationId);
    }
  }
  return out;
}

const clients: Client[] = [];

async function agent(server: TestServer, key: string): Promise<Client> {
  const client = await connectAgent(server.url, key);
  clients.push(client);
  return client;
}

const call = callTool;

const httpConfig = (n: string) => JSON.stringify({ url: `https://example.test/${n}` });

let server: TestServer;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let rest: ApiClient;
let owner: Client;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'business' });
  rest = server.api(org.apiKey);
  owner = await agent(server, org.apiKey);
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await server?.close();
});

describe('the tools', () => {
  let tools: Awaited<ReturnType<Client['listTools']>>['tools'];
  beforeAll(async () => { tools = (await owner.listTools()).tools; });
  const tool = (name: string) => tools.find((t) => t.name === name)!;

  test('exactly every GET outside the excluded areas, plus the three monitor writes', () => {
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual([...expectedTools()].sort());
    for (const present of ['listMonitors', 'getMonitor', 'getIndex', 'getMe', 'listIncidents', 'getBilling', 'createMonitor', 'updateMonitor', 'deleteMonitor']) expect(names).toContain(present);
    for (const absent of ['listWorkspaces', 'createWorkspace', 'listMembers', 'listApiKeys', 'createApiKey', 'listStatusPages', 'getStatusPage', 'listOrganizations', 'listSessions', 'dismissSetup', 'createChannel', 'updateIncident']) {
      expect(names).not.toContain(absent);
    }
  });

  test('an operation that is not a tool cannot be called by its name either', async () => {
    for (const name of ['listWorkspaces', 'listApiKeys', 'createApiKey', 'getStatusPage', 'listOrganizations', 'pauseMonitor']) {
      await expect(owner.callTool({ name, arguments: {} })).rejects.toThrow(/Unknown tool/);
    }
  });

  test('annotations say truthfully what each does', () => {
    expect(tool('listMonitors').annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(tool('createMonitor').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    // PATCH replaces config and tags as a whole: not additive, but repeating it changes nothing more.
    expect(tool('updateMonitor').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(tool('deleteMonitor').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    for (const t of tools) if (!['createMonitor', 'updateMonitor', 'deleteMonitor'].includes(t.name)) expect({ name: t.name, readOnly: t.annotations?.readOnlyHint }).toEqual({ name: t.name, readOnly: true });
  });

  test('names, descriptions and input schemas come from the contract', () => {
    expect(tool('createMonitor').title).toBe('Create a monitor');
    expect(tool('createMonitor').description).toMatch(/^Create a monitor \(POST \/api\/v1\/monitors; permission monitor:create\)/);
    expect(tool('createMonitor').description).toContain('intervalSeconds');
    const create = tool('createMonitor').inputSchema as any;
    expect(create.required).toEqual(['body']);
    expect(create.properties.body.required).toEqual(['name', 'kind', 'workspaceId', 'config']);
    expect(create.properties.body.properties.kind.enum).toContain('http');
    const update = tool('updateMonitor').inputSchema as any;
    expect(update.required).toEqual(['id', 'body']);
    expect(update.properties.id).toMatchObject({ type: 'string' });
    // A $ref of the contract (tags: StringList) is inlined: the schema stands alone.
    expect(JSON.stringify(tools.map((t) => t.inputSchema))).not.toContain('$ref');
    expect(update.properties.body.properties.tags.description).toMatch(/Replaces the tags/);
    const history = tool('getMonitorHistory').inputSchema as any;
    expect(Object.keys(history.properties)).toEqual(expect.arrayContaining(['id']));
    expect(tool('listMonitors').inputSchema).toMatchObject({ type: 'object', properties: { tag: { type: 'string' } }, additionalProperties: false });
  });
});

describe('calls run as the key', () => {
  test('a read returns what the REST read returns, under the same tenant filter', async () => {
    const id = ok('createMonitor', await rest.post('/monitors', { name: 'Read me', kind: 'http', workspaceId: org.workspaceId, config: httpConfig('r'), tags: ['edge'] }), 201).id;
    const listed = await call(owner, 'listMonitors', {});
    expect(listed.isError).toBeFalsy();
    const direct = await rest.get('/monitors');
    ok('listMonitors', direct);
    expect(listed.body).toEqual(direct.body);
    expect(listed.structuredContent).toEqual(listed.body);
    expect(listed.body.data.map((m: { id: string }) => m.id)).toContain(id);
    // A query parameter, typed by the contract, reaches the operation.
    expect((await call(owner, 'listMonitors', { tag: 'edge' })).body.data.map((m: { id: string }) => m.id)).toEqual([id]);
    expect((await call(owner, 'listMonitors', { tag: 'nothing-has-this' })).body.data).toEqual([]);
    expect((await call(owner, 'getMonitor', { id })).body.data).toMatchObject({ id, name: 'Read me', paused: false });

    // Another organisation's monitor does not exist for this key: the same 404 as REST.
    const other = await server.org();
    const theirs = ok('createMonitor', await server.api(other.apiKey).post('/monitors', { name: 'Theirs', kind: 'http', workspaceId: other.workspaceId, config: httpConfig('t') }), 201).id;
    const refused = await call(owner, 'getMonitor', { id: theirs });
    const notFound = await rest.get(`/monitors/${theirs}`);
    expect(notFound.status).toBe(404);
    expect(refused.isError).toBe(true);
    expect(refused.body).toEqual({ status: 404, ...notFound.body });
  });

  test('the three writes: create, change and delete a monitor, seen through REST', async () => {
    const created = await call(owner, 'createMonitor', { body: { name: 'By agent', kind: 'http', workspaceId: org.workspaceId, config: httpConfig('a'), intervalSeconds: 600 } });
    expect(created.isError).toBeFalsy();
    const id = created.body.data.id as string;
    expect(ok('getMonitor', await rest.get(`/monitors/${id}`))).toMatchObject({ name: 'By agent', intervalSeconds: 600, kind: 'http' });

    const updated = await call(owner, 'updateMonitor', { id, body: { name: 'Renamed by agent', paused: true } });
    expect(updated.isError).toBeFalsy();
    expect(updated.body.data).toMatchObject({ id, name: 'Renamed by agent', paused: true });
    expect(ok('getMonitor', await rest.get(`/monitors/${id}`))).toMatchObject({ name: 'Renamed by agent', paused: true });

    const deleted = await call(owner, 'deleteMonitor', { id });
    expect(deleted.isError).toBeFalsy();
    expect((await rest.get(`/monitors/${id}`)).status).toBe(404);
    // Deleting again finds nothing: the REST 404, as a tool error.
    expect((await call(owner, 'deleteMonitor', { id })).body).toMatchObject({ status: 404, code: 'not_found' });
  });

  test('a body may also be passed as the arguments themselves, beside the path parameters', async () => {
    const created = await call(owner, 'createMonitor', { name: 'Flat', kind: 'http', workspaceId: org.workspaceId, config: httpConfig('f'), tags: ['Flat'] });
    expect(created.isError).toBeFalsy();
    const id = created.body.data.id as string;
    expect(ok('getMonitor', await rest.get(`/monitors/${id}`))).toMatchObject({ name: 'Flat', tags: ['flat'] });
    const updated = await call(owner, 'updateMonitor', { id, name: 'Flat renamed', intervalSeconds: 900 });
    expect(updated.isError).toBeFalsy();
    expect(ok('getMonitor', await rest.get(`/monitors/${id}`))).toMatchObject({ id, name: 'Flat renamed', intervalSeconds: 900 });
    // Validated as the REST body is: the same 400 naming the same field.
    const bad = await call(owner, 'updateMonitor', { id, intervalSeconds: 'often' });
    const direct = await rest.patch(`/monitors/${id}`, { intervalSeconds: 'often' });
    expect(direct.status).toBe(400);
    expect(bad.body).toEqual({ status: 400, ...direct.body });
    // Both forms at once are ambiguous.
    expect((await call(owner, 'updateMonitor', { id, name: 'x', body: { name: 'y' } })).body).toMatchObject({ status: 400, code: 'unknown_field', details: { field: 'name' } });
    // Only the id: an empty change, as REST says.
    expect((await call(owner, 'updateMonitor', { id })).body).toMatchObject({ status: 400 });
    expect((await call(owner, 'deleteMonitor', { id, name: 'x' })).body).toMatchObject({ status: 400, code: 'unknown_field', details: { field: 'name' } });
    expect((await call(owner, 'deleteMonitor', { id })).isError).toBeFalsy();
  });

  test('bad input is the REST 400 (validation by the contract), and arguments the operation has not are refused', async () => {
    const bad = await call(owner, 'createMonitor', { body: { name: 'No kind', workspaceId: org.workspaceId, config: '{}' } });
    const direct = await rest.post('/monitors', { name: 'No kind', workspaceId: org.workspaceId, config: '{}' });
    expect(direct.status).toBe(400);
    expect(bad.isError).toBe(true);
    expect(bad.body).toEqual({ status: 400, ...direct.body });
    expect((await call(owner, 'listMonitors', { workspace: 'x' })).body).toMatchObject({ status: 400, code: 'unknown_field', details: { field: 'workspace' } });
    expect((await call(owner, 'getMonitor', {})).body).toMatchObject({ status: 400, code: 'missing_field', details: { field: 'id' } });
  });

  test('a viewer key is refused a write with the same 403 as REST, and nothing is created', async () => {
    const viewer = await server.member(org.organizationId, 'viewer');
    const viewerAgent = await agent(server, viewer.apiKey);
    const body = { name: 'Viewer try', kind: 'http', workspaceId: org.workspaceId, config: httpConfig('v') };
    const refused = await call(viewerAgent, 'createMonitor', { body });
    const direct = await server.api(viewer.apiKey).post('/monitors', body);
    expect(direct.status).toBe(403);
    expect(direct.body).toMatchObject({ code: 'forbidden', vars: { permission: 'monitor:create' } });
    expect(refused.isError).toBe(true);
    expect(refused.body).toEqual({ status: 403, ...direct.body });
    // The viewer may read.
    expect((await call(viewerAgent, 'listMonitors')).isError).toBeFalsy();
    const names = ok('listMonitors', await rest.get('/monitors')).map((m: { name: string }) => m.name);
    expect(names).not.toContain('Viewer try');
  });

  test('the audit entry of an agent write names the key, as a direct write does', async () => {
    const keyId = ok('getMe', await rest.get('/me')).key.id as string;
    const id = (await call(owner, 'createMonitor', { body: { name: 'Audited by agent', kind: 'http', workspaceId: org.workspaceId, config: httpConfig('au') } })).body.data.id;
    await call(owner, 'deleteMonitor', { id });
    const entries = ok('listAuditEntries', await rest.get('/audit?limit=200')) as Array<{ action: string; resourceId: string; actor: { type: string; id: string } }>;
    const mine = entries.filter((e) => e.resourceId === id);
    expect(mine.map((e) => e.action).sort()).toEqual(['monitor.created', 'monitor.deleted']);
    for (const e of mine) expect(e.actor).toMatchObject({ type: 'api_key', id: keyId });
    // The audit log is readable through the agent too.
    const viaAgent = await call(owner, 'listAuditEntries', { limit: 200 });
    expect(viaAgent.body.data.filter((e: { resourceId: string }) => e.resourceId === id)).toHaveLength(2);
  });

  test('the index through the agent is the index the key reads directly, the mcp address included', async () => {
    const direct = ok('getIndex', await rest.get('/'));
    const viaAgent = await call(owner, 'getIndex');
    expect(viaAgent.isError).toBeFalsy();
    expect(viaAgent.body).toEqual({ data: direct });
    expect(direct).toMatchObject({ mcp: `${server.url}/mcp`, docs: `${server.url}/docs` });
  });

  test('only the operations that read across areas (search, export) run without the excluded areas\' permissions', () => {
    const { tools } = contractTools();
    const narrowed = tools.filter((t) => spansExcludedAreas(t.route)).map((t) => t.name).sort();
    expect(narrowed).toEqual(['exportAll', 'exportEntity', 'searchResources']);
    const held = new Set(['monitor:read', 'workspace:read', 'member:read', 'api_key:read', 'status_page:read', 'agent:read'] as const);
    expect([...agentPermissions(held)].sort()).toEqual(['agent:read', 'monitor:read']);
  });
});

describe('search and export through the agent leave the excluded areas out', () => {
  test('search finds monitors but no workspace, member, invitation, API key or status page, which the same key finds directly', async () => {
    const tag = `kestrel${Date.now()}`;
    ok('createMonitor', await rest.post('/monitors', { name: `${tag} api`, kind: 'http', workspaceId: org.workspaceId, config: httpConfig('k') }), 201);
    ok('createWorkspace', await rest.post('/workspaces', { name: `${tag} team` }), 201);
    ok('createApiKey', await rest.post('/api-keys', { name: `${tag} key` }), 201);
    ok('createStatusPage', await rest.post('/status-pages', { name: `${tag} status`, workspaceId: org.workspaceId }), 201);
    const direct = ok('searchResources', await rest.get(`/search?q=${tag}&limit=20`)) as Array<{ type: string }>;
    expect(new Set(direct.map((h) => h.type))).toEqual(new Set(['monitor', 'workspace', 'api_key', 'status_page']));
    const viaAgent = await call(owner, 'searchResources', { q: tag, limit: 20 });
    expect(viaAgent.isError).toBeFalsy();
    expect(viaAgent.body.data.map((h: { type: string }) => h.type)).toEqual(['monitor']);
  });

  test('the export zip through the agent lists members and status pages as missing; a file of theirs is refused', async () => {
    const zip = await owner.callTool({ name: 'exportAll', arguments: {} }) as CallToolResult;
    expect(zip.isError).toBeFalsy();
    const resource = (zip.content[0] as { type: string; resource: { mimeType: string; blob?: string } }).resource;
    expect(resource.mimeType).toBe('application/zip');
    const files = unzipSync(new Uint8Array(Buffer.from(resource.blob!, 'base64')));
    const manifest = JSON.parse(Buffer.from(files['manifest.json']).toString('utf8')) as { missing: Array<{ entity: string }> };
    const missing = manifest.missing.map((m) => m.entity);
    expect(missing).toEqual(expect.arrayContaining(['members', 'status-pages']));
    const member = await call(owner, 'exportEntity', { entity: 'members' });
    expect(member.isError).toBe(true);
    expect(member.body).toMatchObject({ status: 403 });
    const monitors = await owner.callTool({ name: 'exportEntity', arguments: { entity: 'monitors', format: 'json' } }) as CallToolResult;
    expect(monitors.isError).toBeFalsy();
  });
});

describe('the endpoint', () => {
  const rpc = (headers: Record<string, string>, body: unknown, method = 'POST') => fetch(`${server.url}/mcp`, {
    method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: method === 'POST' ? JSON.stringify(body) : undefined,
  });
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

  test('a missing or unknown key is the REST 401', async () => {
    const direct = await server.api('vgl_nope').get('/monitors');
    expect(direct.status).toBe(401);
    for (const headers of [{}, { authorization: 'Bearer vgl_nope' }] as Record<string, string>[]) {
      const res = await rpc(headers, list);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(direct.body);
    }
    const c = new Client({ name: 'no-key', version: '1' });
    await expect(c.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)))).rejects.toThrow(/401|unauthorized/i);
  });

  test('a cookie alone signs nothing in; GET and DELETE are 405 (no event stream, no session)', async () => {
    expect((await rpc({ cookie: 'vigil_session=whatever' }, list)).status).toBe(401);
    for (const method of ['GET', 'DELETE']) {
      const res = await rpc({ authorization: `Bearer ${org.apiKey}` }, undefined, method);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  test('a plain JSON-RPC request answers JSON; not JSON is a 400', async () => {
    const res = await rpc({ authorization: `Bearer ${org.apiKey}` }, list);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = await res.json();
    expect(body.result.tools.length).toBe(expectedTools().size);
    const bad = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{not json' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_json' });
  });

  test('a client that accepts JSON is answered JSON, whatever else its Accept lists; a body without Content-Type is read as JSON', async () => {
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'getSummary', arguments: {} } };
    const direct = ok('getSummary', await rest.get('/summary'));
    for (const accept of ['application/json', '*/*', undefined]) {
      const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(call) });
      expect({ accept, status: res.status }).toEqual({ accept, status: 200 });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = await res.json();
      expect(answer).toMatchObject({ jsonrpc: '2.0', id: 3, result: { structuredContent: { data: direct } } });
    }
    // No Content-Type at all (fetch then says text/plain): the body is JSON-RPC all the same.
    const bare = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, accept: 'application/json' }, body: JSON.stringify(list) });
    expect(bare.status).toBe(200);
    expect((await bare.json()).result.tools.length).toBe(expectedTools().size);
    // A client that takes no JSON cannot be answered.
    const html = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', accept: 'text/html' }, body: JSON.stringify(list) });
    expect(html.status).toBe(406);
  });
});

describe('the index names the agent server by an address the client can use', () => {
  /** GET /api/v1 sent to `server` with `host` as the Host header (the name a client reached the server by). */
  const indexVia = (to: TestServer, key: string, host: string) => new Promise<any>((resolve, reject) => {
    const u = new URL(`${to.url}/api/v1`);
    http.get({ hostname: u.hostname, port: u.port, path: u.pathname, headers: { host, authorization: `Bearer ${key}` } }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    }).on('error', reject);
  });

  test('without BASE_URL: the host the request named, so that a client on another machine (or by another name) reaches /mcp', async () => {
    const port = new URL(server.url).port;
    const idx = await indexVia(server, org.apiKey, `vigil.internal:${port}`);
    expect(idx.status).toBe(200);
    expect(idx.body.data).toMatchObject({ mcp: `http://vigil.internal:${port}/mcp`, openapi: `http://vigil.internal:${port}/openapi.json`, docs: `http://vigil.internal:${port}/docs` });
    // The address is absolute and works as given: the SDK client connects to it.
    const direct = ok('getIndex', await rest.get('/'));
    expect(direct.mcp).toBe(`${server.url}/mcp`);
    const client = new Client({ name: 'from-index', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(direct.mcp), { requestInit: { headers: { Authorization: `Bearer ${org.apiKey}` } } }));
    clients.push(client);
    expect((await client.listTools()).tools.length).toBe(expectedTools().size);
    // A Host that is no host name is not echoed.
    expect((await indexVia(server, org.apiKey, 'evil.test/x?')).body.data.mcp).toBe(`${server.url}/mcp`);
  });

  test('with BASE_URL: BASE_URL, whatever the Host', async () => {
    const based = await startTestServer({ BASE_URL: 'https://vigil.example.com/' });
    try {
      const o = await based.org();
      expect((await indexVia(based, o.apiKey, 'elsewhere.test')).body.data).toMatchObject({ mcp: 'https://vigil.example.com/mcp', docs: 'https://vigil.example.com/docs' });
    } finally {
      await based.close();
    }
  }, 30_000);
});

describe('the rate limit', () => {
  let limited: TestServer;
  beforeAll(async () => { limited = await startTestServer({ RATE_LIMIT_READ: '10', RATE_LIMIT_WRITE: '4' }); }, 60_000);
  afterAll(async () => { await limited?.close(); });

  test('a read call is counted twice, once for the call and once for the request inside it; the handshake and the list cost nothing', async () => {
    const o = await limited.org();
    const client = await agent(limited, o.apiKey); // initialize and its notification: no tool call, 0 of 10
    expect((await client.listTools()).tools.length).toBeGreaterThan(0); // still 0 of 10
    const api = limited.api(o.apiKey);
    for (let i = 0; i < 3; i++) expect((await api.get('/monitors')).status).toBe(200); // 3 of 10
    const results: Array<{ ok: boolean; status?: number }> = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(client, 'listMonitors');
      results.push({ ok: !r.isError, status: r.isError ? r.body.status : undefined });
    } // 9 of 10
    expect(results).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    // The call itself is let in (10 of 10); the request inside it is refused as REST would be.
    const inner = await call(client, 'listMonitors');
    expect(inner.isError).toBe(true);
    expect(inner.body).toMatchObject({ status: 429, code: 'rate_limited', vars: { bucket: 'R' } });
    // Now the call itself is refused, with the REST 429, before it runs.
    await expect(call(client, 'listMonitors')).rejects.toThrow(/429|rate/i);
    const direct = await api.get('/monitors');
    expect(direct.status).toBe(429);
    expect(direct.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  test('a write spends the write limit, twice', async () => {
    const o = await limited.org();
    const client = await agent(limited, o.apiKey); // W: 0 of 4
    const body = (n: number) => ({ body: { name: `w${n}`, kind: 'http', workspaceId: o.workspaceId, config: httpConfig(`w${n}`) } });
    expect((await call(client, 'createMonitor', body(1))).isError).toBeFalsy(); // W: 2 of 4
    expect((await call(client, 'createMonitor', body(2))).isError).toBeFalsy(); // W: 4 of 4
    await expect(call(client, 'createMonitor', body(3))).rejects.toThrow(/429|rate/i);
    const api = limited.api(o.apiKey);
    expect((await api.post('/monitors', body(4).body)).status).toBe(429);
    // The read limit was not touched by the writes: reads still go through.
    expect(ok('listMonitors', await api.get('/monitors')).map((m: { name: string }) => m.name).sort()).toEqual(['w1', 'w2']);
  });
});
