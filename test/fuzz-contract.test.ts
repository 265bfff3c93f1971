/**
 * Every operation of the contract, sent what a careless or hostile client
 * sends: ids that do not exist or are not ids, query values of the wrong
 * type or out of range, bodies that are not JSON, not objects, or whose
 * fields each in turn have the wrong type, null, or an absurd size. The
 * answer must be a 4xx with the error shape (a stable `code`), never a 5xx,
 * and prompt. Bodies start from a plausible one made from the operation's
 * schema (the contract served at /openapi.json), with the ids of real
 * resources, so a mutated field reaches the handler's own checks rather
 * than stopping at a missing sibling.
 */
import { gzipSync } from 'node:zlib';
import { routes, type RouteDef } from '../gen/routes';
import { permissionsOf } from '../src/auth/roles';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { schemaTools, type Schema, type SchemaTools, type Spec } from './support/schema';
import * as contract from './support/contract';

let server: TestServer;
let owner: ApiClient;
let orgId = '';
/** Real ids by the name a path parameter or a body field gives them. */
let ids: Record<string, string> = {};

let tools: SchemaTools;
const resolve = (s: Schema | undefined) => tools.resolve(s);
const typeOf = (s: Schema | undefined) => tools.typeOf(s);
/** The id of a real resource for a body field named after it (`workspaceId`, `monitorIds`, …). */
const idFor = (name: string): string | undefined => {
  const k = Object.keys(ids).find((key) => name === key || name === `${key}Id` || name === `${key}Ids`);
  return k === undefined ? undefined : ids[k];
};
/** A plausible value of `s` (for field `name`), real ids where the name says what it points to. */
const plausible = (s: Schema | undefined, name: string): unknown => tools.plausible(s, name, idFor);

/** Values of the wrong kind for a field of schema `s`. */
function wrong(s0: Schema | undefined): unknown[] {
  const s = resolve(s0);
  const common: unknown[] = [null, { nested: { deeper: [1, 2, 3] } }, ['a', 1, null]];
  switch (typeOf(s)) {
    case 'integer': case 'number': return [...common, 'abc', -1, 0, 1.5, 1e308, 2 ** 63, '12'];
    case 'boolean': return [...common, 'yes', 1];
    case 'array': return [...common.filter((v) => !Array.isArray(v)), 'x', [{}], Array.from({ length: 5000 }, (_, i) => `v${i}`)];
    case 'object': return [...common.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)), 'x', 42];
    default: return [...common, 12345, true, '', ' ', '\u0000', 'x'.repeat(20_000), '💥'.repeat(300), '../../etc/passwd', "'; drop table monitors; --"];
  }
}

function bodySchema(r: RouteDef): Schema | undefined {
  return tools.bodySchema(r.path, r.method);
}

/** The operation's path with its parameters filled: real ids, or `garbage` for every one of them. */
const pathOf = (r: RouteDef, garbage?: string) => contract.pathOf(r, ids, garbage);

const problems: string[] = [];
const GARBAGE = Uint8Array.from({ length: 300 }, (_, i) => (i * 7919 + 13) % 256);
const BOMB = gzipSync(Buffer.alloc(64 * 1024 * 1024));
/** Answers by status (the sweep reached handlers: mostly 400 and 404, some 2xx). */
const statuses = new Map<number, number>();
async function send(r: RouteDef, what: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
  const t = Date.now();
  let res: ApiResponse;
  try {
    res = await owner.request(r.method, path, body, headers);
  } catch (e) {
    problems.push(`${r.operationId} ${what}: no answer (${(e as Error).message})`);
    return { status: 0, headers: new Headers(), body: undefined };
  }
  const ms = Date.now() - t;
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  if (res.status >= 500) problems.push(`${r.operationId} ${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  else if (res.status >= 400 && !(res.body && typeof res.body === 'object' && typeof (res.body as { code?: unknown }).code === 'string')) {
    problems.push(`${r.operationId} ${what}: ${res.status} without the error shape: ${JSON.stringify(res.body).slice(0, 200)}`);
  }
  if (ms > 5000) problems.push(`${r.operationId} ${what}: took ${ms} ms`);
  return res;
}

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000', RATE_LIMIT_EXPORT: '1000000', RATE_LIMIT_SOURCEMAPS: '1000000', RATE_LIMIT_SYMBOLS: '1000000' });
  tools = schemaTools((await (await fetch(`${server.url}/openapi.json`)).json()) as Spec);
  const seeded = await contract.seedOrganization(server);
  ({ owner, ids, outside } = seeded);
  orgId = seeded.organizationId;
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** Credentials of the ingestion endpoints outside /api/v1. */
let outside: Record<string, string> = {};

// Operations that end the caller's own access, whose wrong inputs are covered elsewhere (account, sessions), and the
// event stream, whose answer never ends (its wrong cursors, answered with `reset`, are in stream.test.ts).
const SKIP = new Set(['deleteAccount', 'signUp', 'streamEvents']);

test('no operation answers a 5xx, or without the error shape, to wrong ids, query values or bodies', async () => {
  for (const r of routes) {
    if (SKIP.has(r.operationId)) continue;
    // Ids that are not ids.
    if (r.pathParams.length > 0) {
      for (const g of ['nope', 'mon_00000000000000000000000000', '%00', '..', 'x'.repeat(3000), "1' or '1'='1"]) {
        await send(r, `path ${JSON.stringify(g.slice(0, 20))}`, pathOf(r, g), r.body === 'none' || r.rawRequest ? undefined : {});
      }
    }
    // Query values of the wrong type, out of range, repeated.
    for (const q of r.queryParams) {
      for (const v of ['abc', '-1', '0', '99999999999999999999', '1.5', '', '%zz', 'x'.repeat(5000)]) {
        await send(r, `query ${q.name}=${JSON.stringify(v.slice(0, 20))}`, `${pathOf(r)}?${q.name}=${encodeURIComponent(v)}`);
      }
      await send(r, `query ${q.name} twice`, `${pathOf(r)}?${q.name}=1&${q.name}=2`);
    }
    if (r.body === 'none' || r.rawRequest || r.method === 'GET') continue;
    // Bodies that are not JSON objects.
    for (const [what, raw] of [['not JSON', '{"a":'], ['an array', '[1,2]'], ['a string', '"x"'], ['null', 'null'], ['a number', '7'], ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`]] as const) {
      await send(r, `body ${what}`, pathOf(r), raw, { 'content-type': 'application/json' });
    }
    // Each field in turn wrong, the others plausible.
    const schema = bodySchema(r);
    const base = (plausible(schema, r.operationId) ?? {}) as Record<string, unknown>;
    for (const [field, fs] of Object.entries(schema?.properties ?? {})) {
      for (const v of wrong(fs)) {
        await send(r, `body ${field}=${JSON.stringify(v)?.slice(0, 30)}`, pathOf(r), { ...base, [field]: v });
      }
    }
    // Bodies that are not what their content type says: protobuf, gzip.
    for (const [what, bytes, type, enc] of [
      ['protobuf garbage', GARBAGE, 'application/x-protobuf', undefined],
      ['protobuf with a field of the wrong wire type', Uint8Array.from([0x0a, 0x05, 0x01, 0x02]), 'application/x-protobuf', undefined],
      ['gzip garbage', GARBAGE, 'application/json', 'gzip'],
      ['a gzip bomb (64 MiB of zeros)', BOMB, 'application/json', 'gzip'],
    ] as const) {
      await send(r, `body ${what}`, pathOf(r), bytes, { 'content-type': type, ...(enc ? { 'content-encoding': enc } : {}) });
    }
    // The same operation through Connect: a message that does not decode, JSON of the wrong kind.
    for (const [what, body, type] of [['binary garbage', GARBAGE, 'application/proto'], ['JSON array', '[1]', 'application/json'], ['JSON of wrong types', JSON.stringify(Object.fromEntries(Object.keys(schema?.properties ?? {}).map((k) => [k, { x: [1] }]))), 'application/json']] as const) {
      const res = await fetch(`${server.url}/rpc/${r.service.includes('.') ? r.service : `vigil.v1.${r.service}`}/${r.rpc}`, { method: 'POST', headers: { authorization: `Bearer ${owner.key}`, 'content-type': type }, body });
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) problems.push(`${r.operationId} Connect ${what}: ${res.status} ${text.slice(0, 300)}`);
    }
    // Unknown fields beside plausible ones.
    await send(r, 'body with unknown fields', pathOf(r), { ...base, surprise: 1, __proto__: { polluted: true }, constructor: { prototype: { x: 1 } } });
  }
  expect(problems).toEqual([]);
  // The sweep reached the handlers' own checks (not only the authentication in front of them).
  expect(statuses.get(400)).toBeGreaterThan(1000);
  expect(statuses.get(404)).toBeGreaterThan(100);
}, 600_000);

test('no endpoint outside /api/v1 (ingestion, public pages, links) answers a 5xx to garbage', async () => {
  const bad: string[] = [];
  const seen = new Map<number, number>();
  const hit = async (what: string, url: string, init: RequestInit = {}) => {
    const t = Date.now();
    try {
      const res = await fetch(url.startsWith('http') ? url : `${server.url}${url}`, { redirect: 'manual', ...init });
      await res.arrayBuffer();
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      if (res.status >= 500) bad.push(`${what}: ${res.status}`);
    } catch (e) {
      bad.push(`${what}: no answer (${(e as Error).message})`);
    }
    if (Date.now() - t > 5000) bad.push(`${what}: took ${Date.now() - t} ms`);
  };
  const sentryAuth = `Sentry sentry_key=${outside.sentryKey}, sentry_version=7`;
  const targets: [string, string, Record<string, string>][] = [
    ['analytics event', '/api/event', {}],
    ['sentry envelope', `/api/${outside.sentryRef}/envelope/?sentry_key=${outside.sentryKey}`, {}],
    ['sentry store', `/api/${outside.sentryRef}/store/`, { 'x-sentry-auth': sentryAuth }],
    ['sentry envelope, unknown project', '/api/999999/envelope/?sentry_key=nope', {}],
    ['heartbeat ping', outside.pingUrl, {}],
    ['heartbeat ping /fail', `${outside.pingUrl}/fail`, {}],
    ['agent report', '/agent/v1/report', { authorization: `Bearer ${outside.agentToken}` }],
    ['probe claim', '/probe/v1/claim', { authorization: 'Bearer pr_nope' }],
    ['probe results', '/probe/v1/results', { authorization: 'Bearer pr_nope' }],
    ['status subscribe', `/status/${outside.statusSlug}/subscribe`, {}],
    ['invitation', '/invitations/nope', {}],
    ['password reset', '/password-reset/nope', {}],
    ['stripe webhook', '/webhooks/stripe', { 'stripe-signature': 't=1,v1=00' }],
    ['mcp', '/mcp', { authorization: `Bearer ${owner.key}`, accept: 'application/json, text/event-stream' }],
  ];
  const bodies: [string, BodyInit, Record<string, string>][] = [
    ['not JSON', '{"a":', { 'content-type': 'application/json' }],
    ['JSON of the wrong kind', '[1,"x",null]', { 'content-type': 'application/json' }],
    ['JSON fields of the wrong types', JSON.stringify({ n: { x: 1 }, u: 5, d: [], name: null, event_id: 7, exception: 'x', cpu: 'high', jsonrpc: 2, method: {} }), { 'content-type': 'application/json' }],
    ['text', 'hello', { 'content-type': 'text/plain' }],
    ['binary garbage', GARBAGE, { 'content-type': 'application/octet-stream' }],
    ['gzip garbage', GARBAGE, { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
    ['a gzip bomb', BOMB, { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
    ['an envelope with a lying length', `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}\n{"type":"event","length":999999}\n{}`, { 'content-type': 'application/x-sentry-envelope' }],
    ['an envelope of garbage items', `{}\n${'{"type":"event"}\nnot json\n'.repeat(50)}`, { 'content-type': 'application/x-sentry-envelope' }],
    ['empty', '', {}],
    ['a form', 'email=%ZZ&x=1', { 'content-type': 'application/x-www-form-urlencoded' }],
  ];
  for (const [what, url, headers] of targets) {
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']) await hit(`${what} ${method}`, url, { method, headers });
    for (const [b, body, h] of bodies) await hit(`${what} POST ${b}`, url, { method: 'POST', headers: { ...headers, ...h }, body });
  }
  // Public pages and links with garbage in the path and the query.
  for (const path of [`/status/${outside.statusSlug}`, '/status/nope', `/status/${outside.statusSlug}/feed.xml?limit=abc`, `/status/${outside.statusSlug}/badge.svg?style=%00`,
    `/status/${outside.statusSlug}/api/v2/summary.json?x=${'y'.repeat(5000)}`, `/status/${outside.statusSlug}/subscribers/confirm/nope`, `/status/${outside.statusSlug}/unsubscribe/a/b`,
    '/confirm/nope', '/feeds/nope', '/feeds/%E0%A4%A', '/tls/ask?domain=%00', '/tls/ask', '/api/proto/..%2F..%2Fpackage.json', '/js/script.js?x=%', '/openapi.json?%']) {
    await hit(`GET ${path.slice(0, 60)}`, path);
    await hit(`POST ${path.slice(0, 60)}`, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email": 5}' });
  }
  expect(bad).toEqual([]);
  expect([...seen.keys()].some((s) => s >= 400 && s < 500)).toBe(true);
}, 300_000);

test('every role is refused, never served or failed, what it lacks the permission for: 403 naming it, a write of a viewer never lands', async () => {
  const bad: string[] = [];
  for (const role of ['viewer', 'member', 'admin'] as const) {
    const key = server.api((await server.member(orgId, role)).apiKey);
    const has = permissionsOf(role);
    for (const r of routes) {
      if (SKIP.has(r.operationId) || r.anonymous) continue;
      const lacking = r.permissions.length > 0 && r.permissions.every((p) => !has.includes(p));
      // A viewer's key never writes: every write, whatever its permission, is refused.
      const viewerWrite = role === 'viewer' && r.method !== 'GET';
      if (!lacking && !r.sessionOnly && !viewerWrite) continue;
      const schema = r.body === 'none' || r.rawRequest ? undefined : bodySchema(r);
      const body = (r.body === 'none' || r.rawRequest ? undefined : plausible(schema, r.operationId) ?? {}) as Record<string, unknown> | undefined;
      // An operation checking per field is sent one (an empty change is refused before any permission).
      const [first] = Object.entries(schema?.properties ?? {});
      if (body && r.permission === null && first && Object.keys(body).length === 0) body[first[0]] = plausible(first[1], first[0]);
      const res = await key.request(r.method, pathOf(r), body);
      const e = res.body as { code?: string; error?: string };
      if (viewerWrite && res.status < 400) {
        bad.push(`viewer ${r.operationId}: a write answered ${res.status}`);
      } else if (!lacking && !r.sessionOnly) {
        continue;
      } else if (r.sessionOnly) {
        if (res.status !== 403 || e?.code !== 'session_required') bad.push(`${role} ${r.operationId}: ${res.status} ${e?.code}, not 403 session_required`);
      } else if (res.status !== 403 || !r.permissions.some((p) => e?.error?.includes(p))) {
        bad.push(`${role} ${r.operationId} (needs ${r.permissions.join(' or ')}): ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
    }
  }
  expect(bad).toEqual([]);
}, 300_000);
