/**
 * Calling the contract's operations from a test: the schema tools of
 * `./schema` bound to a spec and to the ids of real resources, an
 * operation's parameters and body schema, its path filled with real ids,
 * and an organisation seeded with one resource of every kind those ids
 * name. Shared by the contract sweeps (fuzz-contract, free-text-bounds).
 */
import type { RouteDef } from '../../gen/routes';
import type { ApiClient, TestServer } from './harness';
import { schemaTools, type Schema, type Spec as SchemaSpec } from './schema';

export type { Schema };
/** A query, path or header parameter. */
export type Param = { name: string; in: string; required?: boolean; schema?: Schema };
/** One operation of the contract. */
export type Operation = {
  operationId: string;
  parameters?: Param[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
};
/** The contract (openapi.yaml, or /openapi.json as served), with the operations' parameters. */
export type Spec = SchemaSpec & { paths: Record<string, Record<string, Operation>> };

/** `s` with `$ref`s followed and `allOf` merged. */
export const resolveSchema = (spec: Spec, s: Schema | undefined) => schemaTools(spec).resolve(s);

/** The id of a real resource for a field named after it (`workspaceId`, `monitorIds`, …). */
export function idFor(ids: Record<string, string>) {
  return (name: string): string | undefined => {
    const k = Object.keys(ids).find((key) => name === key || name === `${key}Id` || name === `${key}Ids`);
    return k === undefined ? undefined : ids[k];
  };
}

/** A plausible value of `s` for a field named `name`: required properties only, real ids where the name says what it points to. */
export function plausible(spec: Spec, ids: Record<string, string>, s: Schema | undefined, name: string): unknown {
  return schemaTools(spec).plausible(s, name, idFor(ids));
}

/** The operation of a route in the contract. */
export function operationOf(spec: Spec, r: Pick<RouteDef, 'path' | 'method'>): Operation | undefined {
  return spec.paths[r.path]?.[r.method.toLowerCase()];
}

/** The JSON body schema of a route, resolved; undefined when it takes none. */
export function bodySchema(spec: Spec, r: Pick<RouteDef, 'path' | 'method'>): Schema | undefined {
  return schemaTools(spec).bodySchema(r.path, r.method);
}

/** The id a path's `{id}` takes, by its first segment. */
const COLLECTION: Record<string, string> = {
  monitors: 'monitor', channels: 'channel', 'status-pages': 'statusPage', hosts: 'host', analytics: 'analyticsSite', errors: 'errorProject',
  agents: 'agent', workspaces: 'workspace',
};

/** The route's path with its parameters filled: real ids, or `garbage` for every one of them. */
export function pathOf(r: Pick<RouteDef, 'path'>, ids: Record<string, string>, garbage?: string): string {
  return r.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(garbage ?? (p === 'entity' ? 'monitors' : ids[COLLECTION[r.path.split('/')[1]] ?? ''] ?? 'nope')));
}

/** An organisation with one resource of every kind, the owner's client, and the credentials of the endpoints outside /api/v1. */
export interface Seeded {
  owner: ApiClient;
  organizationId: string;
  /** The owner's user id. */
  userId: string;
  /** Real ids by the name a path parameter or a body field gives them (`monitor`, `channel`, `workspace`, …). */
  ids: Record<string, string>;
  /** Agent token, Sentry project ref and key, a heartbeat's ping URL, a status page's slug. */
  outside: Record<string, string>;
}

/** Creates a business organisation on `server` with a monitor, channel, page, host, site, error project, agent and heartbeat. */
export async function seedOrganization(server: TestServer): Promise<Seeded> {
  const org = await server.org({ plan: 'business' });
  const owner = server.api(org.apiKey);
  const ids: Record<string, string> = { workspace: org.workspaceId, organization: org.organizationId };
  const outside: Record<string, string> = {};
  const made = async (path: string, body: unknown) => {
    const r = await owner.post(path, body);
    if (r.status !== 201 && r.status !== 200) throw new Error(`setting up ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return (r.body as { data: { id: string } }).data;
  };
  ids.monitor = (await made('/monitors', { name: 'Fuzz', kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 60, config: JSON.stringify({ url: 'https://example.com/' }) })).id;
  ids.channel = (await made('/channels', { name: 'Fuzz hook', kind: 'webhook', workspaceId: org.workspaceId, target: 'https://example.com/hook' })).id;
  ids.statusPage = (await made('/status-pages', { name: 'Fuzz page', workspaceId: org.workspaceId })).id;
  ids.host = (await made('/hosts', { name: 'fuzz-host' })).id;
  ids.analyticsSite = (await made('/analytics', { domain: 'fuzz.example.com', workspaceId: org.workspaceId })).id;
  const project = (await made('/errors/projects', { name: 'Fuzz app', workspaceId: org.workspaceId })) as unknown as { id: string; ref: number; publicKey: string };
  ids.errorProject = project.id;
  const agent = (await made('/agents', { name: 'fuzz-agent', workspaceId: org.workspaceId })) as unknown as { id: string; token: string };
  ids.agent = agent.id;
  outside.agentToken = agent.token;
  outside.sentryRef = String(project.ref);
  outside.sentryKey = project.publicKey;
  const beat = await made('/monitors', { name: 'Fuzz beat', kind: 'heartbeat', workspaceId: org.workspaceId, intervalSeconds: 60, config: JSON.stringify({ graceSeconds: 60 }) });
  outside.pingUrl = (await owner.get(`/monitors/${beat.id}/push-url`)).body.data?.url ?? `${server.url}/ping/nope`;
  outside.statusSlug = (await owner.get(`/status-pages/${ids.statusPage}`)).body.data.slug;
  return { owner, organizationId: org.organizationId, userId: org.userId, ids, outside };
}

/** A string somewhere in a request: its path (`['steps', '*', 'targetId']`, `*` for a list's items) and its schema. */
export interface StringField { path: string[]; schema: Schema }

/**
 * Every string a value of `s0` may hold, by path: properties, list items,
 * the branches of `oneOf`/`anyOf`, and the values of string maps (`<key>`).
 * Raw bytes (`contentEncoding`) are not text and are left out.
 */
export function stringFields(spec: Spec, s0: Schema | undefined, path: string[] = [], seen: Set<string> = new Set()): StringField[] {
  if (s0?.$ref) {
    if (seen.has(s0.$ref)) return [];
    seen = new Set(seen).add(s0.$ref);
  }
  const s = resolveSchema(spec, s0);
  if (!s) return [];
  const out: StringField[] = [];
  for (const b of [...(s.oneOf ?? []), ...(s.anyOf ?? [])]) out.push(...stringFields(spec, b, path, seen));
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string') && !s.contentEncoding) out.push({ path, schema: s });
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(...stringFields(spec, v, [...path, k], seen));
  if (s.items) out.push(...stringFields(spec, s.items, [...path, '*'], seen));
  if (s.additionalProperties && typeof s.additionalProperties === 'object') out.push(...stringFields(spec, s.additionalProperties, [...path, '<key>'], seen));
  return out;
}

/** True when a pattern alone bounds a string's length: anchored at both ends, with no `*`, `+` or open `{n,}`. */
export function patternBounds(pattern: string | undefined): boolean {
  return !!pattern && pattern.startsWith('^') && pattern.endsWith('$') && !/(?<!\\)[*+]|\{\d+,\}/.test(pattern);
}
