import type { RouteDef } from '../../gen/routes';

/** A JSON Schema (2020-12, as OpenAPI 3.1 writes them). */
export type JsonSchema = Record<string, unknown>;

interface Parameter { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }
interface Operation { parameters?: Parameter[]; requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: JsonSchema }> } }

/** The parts of the served OpenAPI document the tools are made from. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Keywords that are OpenAPI's, not JSON Schema's, dropped from tool schemas. */
const OPENAPI_ONLY = new Set(['discriminator', 'xml', 'externalDocs', 'example']);

/**
 * A self-contained copy of `schema`: `#/components/schemas/...` references
 * inlined (their siblings, such as a description, kept over the target),
 * vendor extensions (`x-...`) and OpenAPI-only keywords dropped. A reference
 * back into its own ancestry (a recursive schema) becomes `{}`: any value,
 * left to the operation's own validation.
 */
export function inlineRefs(schema: unknown, doc: OpenApiDocument, seen: readonly string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inlineRefs(s, doc, seen));
  if (!schema || typeof schema !== 'object') return schema;
  const { $ref, ...rest } = schema as JsonSchema & { $ref?: string };
  let out: JsonSchema = {};
  if (typeof $ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec($ref)?.[1];
    const target = name ? doc.components?.schemas?.[name] : undefined;
    if (!name || !target) throw new Error(`MCP: unresolvable $ref ${$ref}`);
    if (!seen.includes(name)) out = inlineRefs(target, doc, [...seen, name]) as JsonSchema;
  }
  for (const [k, v] of Object.entries(rest)) {
    if (k.startsWith('x-') || OPENAPI_ONLY.has(k)) continue;
    // Property names are data, not keywords: walk their schemas without filtering the names.
    out[k] = k === 'properties' && v && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, inlineRefs(s, doc, seen)]))
      : inlineRefs(v, doc, seen);
  }
  return out;
}

/**
 * The tool's input: its path and query parameters by name (typed as the
 * contract types them), and its JSON request body under `body`, exactly the
 * parts a REST request would carry.
 */
export function inputSchemaOf(route: RouteDef, doc: OpenApiDocument): JsonSchema {
  const op = (doc.paths[route.path]?.[route.method.toLowerCase()] ?? {}) as Operation;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const p of op.parameters ?? []) {
    if (p.in !== 'path' && p.in !== 'query') continue;
    const s = inlineRefs(p.schema ?? {}, doc) as JsonSchema;
    properties[p.name] = p.description && !s.description ? { ...s, description: p.description.trim() } : s;
    if (p.required || p.in === 'path') required.push(p.name);
  }
  const json = op.requestBody?.content?.['application/json']?.schema;
  if (json) {
    const s = inlineRefs(json, doc) as JsonSchema;
    properties.body = op.requestBody?.description && !s.description ? { ...s, description: op.requestBody.description.trim() } : s;
    if (op.requestBody?.required) required.push('body');
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}
