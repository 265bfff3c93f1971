import fs from 'node:fs';
import path from 'node:path';
import { routes, type Permission, type RouteDef } from '../../gen/routes';
import { ROOT } from '../paths';
import { inputSchemaOf, type JsonSchema, type OpenApiDocument } from './schema';

/**
 * Contract tags no tool is made from. The spec: "No tool exists for
 * workspaces, members, API keys, status pages or the account, so an agent
 * cannot reach them." The account is the person's own account: the
 * `account` tag (the caller's organisations, account deletion) and
 * `sessions` (signing in: sessions, passwords, sign-up). `GET /me` (tagged
 * `account` too) is not the account but the key describing itself, which
 * the spec lists apart from it ("account, billing, me") and lets every key
 * call: it is offered (OFFERED_DESPITE_TAG). `billing` is the
 * organisation's plan, not the account, and stays.
 */
export const EXCLUDED_TAGS: ReadonlySet<string> = new Set(['workspaces', 'members', 'api_keys', 'status_pages', 'account', 'sessions']);
/** Reads of an excluded tag that are not of an excluded area (see EXCLUDED_TAGS). */
export const OFFERED_DESPITE_TAG: ReadonlySet<string> = new Set(['getMe']);

/** True for an operation of an area the spec keeps agents out of. */
const inExcludedArea = (route: RouteDef) => EXCLUDED_TAGS.has(route.tag) && !OFFERED_DESPITE_TAG.has(route.operationId);

/** The writes offered besides every GET (the spec names exactly these three). */
export const WRITE_OPERATIONS: readonly string[] = ['POST /monitors', 'PATCH /monitors/{id}', 'DELETE /monitors/{id}'];

/** MCP tool annotations (hints a client shows or acts on before calling). */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One tool: an operation of the contract, named, described and shaped from it. */
export interface ToolDef {
  /** The operationId. */
  name: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
  route: RouteDef;
  /** The bucket the call itself spends (the request inside spends the route's own): W for a write, else R. */
  callBucket: 'R' | 'W';
}

/**
 * Hints by HTTP method, which is what the operation does: a GET reads; a
 * POST only adds (a new record); a PATCH overwrites what it names (a
 * monitor's `config` and `tags` are replaced as a whole), so it is not
 * additive, but doing it twice changes nothing more; a DELETE removes, and a
 * second one finds nothing left to remove. Every tool works on Vigil's own
 * records (a closed world).
 */
function annotationsOf(route: RouteDef): ToolAnnotations {
  const m = route.method;
  return {
    title: route.summary,
    readOnlyHint: m === 'GET',
    destructiveHint: m === 'PATCH' || m === 'PUT' || m === 'DELETE',
    idempotentHint: m !== 'POST',
    openWorldHint: false,
  };
}

/**
 * GETs that are not a request and an answer: the event stream never ends,
 * so a tool call would never return (an agent reads the state with the
 * other tools instead).
 */
export const ENDLESS_OPERATIONS: ReadonlySet<string> = new Set(['streamEvents']);

/** True when the spec makes a tool of this operation: every GET outside the excluded areas (but endless ones), and the three writes. */
export function isTool(route: RouteDef): boolean {
  if (inExcludedArea(route) || ENDLESS_OPERATIONS.has(route.operationId)) return false;
  return route.method === 'GET' || WRITE_OPERATIONS.includes(`${route.method} ${route.path}`);
}

/**
 * Permissions that guard an operation of an excluded area. An agent does not
 * hold them in operations that span areas (search, export: see
 * `agentPermissions`), which therefore leave those areas out for it as they
 * do for a key lacking them.
 */
export const AREA_PERMISSIONS: ReadonlySet<Permission> = new Set(
  routes.filter(inExcludedArea).flatMap((r) => r.permissions),
);

/** True for an operation that reads across areas, some of them excluded (search, export): an agent runs it with `agentPermissions`. */
export function spansExcludedAreas(route: RouteDef): boolean {
  return route.permissions.some((p) => AREA_PERMISSIONS.has(p));
}

/** The caller's permissions less those of the excluded areas: what an agent runs `spansExcludedAreas` operations with. */
export function agentPermissions(held: ReadonlySet<Permission>): Set<Permission> {
  return new Set([...held].filter((p) => !AREA_PERMISSIONS.has(p)));
}

function describe(route: RouteDef, doc: OpenApiDocument): string {
  const op = doc.paths[route.path]?.[route.method.toLowerCase()] as { description?: string } | undefined;
  const guard = route.permission ? `; permission ${route.permission}` : '';
  const head = `${route.summary} (${route.method} /api/v1${route.path === '/' ? '' : route.path}${guard}).`;
  return [head, op?.description?.trim()].filter(Boolean).join('\n\n');
}

/** Builds the tools from the route table and the OpenAPI document; throws when the contract and the rules above disagree. */
export function buildTools(doc: OpenApiDocument): ToolDef[] {
  const tools = routes.filter(isTool).map((route): ToolDef => ({
    name: route.operationId,
    description: describe(route, doc),
    inputSchema: inputSchemaOf(route, doc),
    annotations: annotationsOf(route),
    route,
    callBucket: route.method === 'GET' ? 'R' : 'W',
  }));
  for (const w of WRITE_OPERATIONS) {
    if (!tools.some((t) => `${t.route.method} ${t.route.path}` === w)) throw new Error(`MCP: the contract has no ${w}`);
  }
  for (const t of tools) {
    // A tool guarded by an area permission could never succeed for an agent: the rule is wrong, not the tool.
    if (t.route.permission && AREA_PERMISSIONS.has(t.route.permission)) throw new Error(`MCP: tool ${t.name} needs ${t.route.permission}, a permission of an excluded area`);
  }
  return tools.sort((a, b) => a.name.localeCompare(b.name));
}

let cached: { tools: ToolDef[]; byName: Map<string, ToolDef> } | null = null;

/** The tools of the served contract (gen/openapi.json), built once. */
export function contractTools(): { tools: ToolDef[]; byName: Map<string, ToolDef> } {
  if (!cached) {
    const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'gen/openapi.json'), 'utf8')) as OpenApiDocument;
    const tools = buildTools(doc);
    cached = { tools, byName: new Map(tools.map((t) => [t.name, t])) };
  }
  return cached;
}
