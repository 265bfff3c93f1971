/**
 * Emits `gen/validators.cjs` (ajv standalone code) and its declarations.
 * One Ajv2020 instance compiles bodies and responses (no coercion, all
 * errors); another compiles query objects (coercion and defaults on).
 */
import Ajv2020 from 'ajv/dist/2020';
import standaloneCode from 'ajv/dist/standalone';
import addFormats from 'ajv-formats';
import { GENERATED_HEADER, type OpenApiDoc, type OperationInfo, type Schema } from './contract';

const CONTRACT_ID = 'https://vigil.invalid/openapi.json';
/** OpenAPI keywords that are not JSON Schema 2020-12 but may appear in schemas. */
const OPENAPI_KEYWORDS = ['components', 'example', 'discriminator', 'xml', 'externalDocs'];

/** Every `x-*` key anywhere in `node`, sorted. */
function extensionKeys(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const v of node) extensionKeys(v, into);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k.startsWith('x-')) into.add(k);
      extensionKeys(v, into);
    }
  }
  return into;
}

/** A deep copy of `node` whose local `$ref`s (`#/...`) point into the contract document. */
function absoluteRefs(node: unknown): any {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? CONTRACT_ID + v : absoluteRefs(v);
  }
  return out;
}

function newAjv(doc: OpenApiDoc, forQuery: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    code: { source: true, lines: true },
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    // One function per component, shared by every validator that references it (keeps the file small).
    inlineRefs: false,
    coerceTypes: forQuery,
    useDefaults: forQuery,
  });
  addFormats(ajv);
  for (const k of [...OPENAPI_KEYWORDS, ...[...extensionKeys(doc)].sort()]) ajv.addKeyword(k);
  ajv.addSchema({ $id: CONTRACT_ID, components: { schemas: doc.components?.schemas ?? {} } });
  return ajv;
}

/** The object schema a request's query string must satisfy (unknown keys allowed). */
export function querySchema(op: OperationInfo): Schema {
  const properties: Record<string, Schema> = {};
  for (const p of op.queryParams) properties[p.name] = absoluteRefs(p.schema);
  const required = op.queryParams.filter((p) => p.required).map((p) => p.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** Wraps one standalone module so that several can live in one file. */
function wrap(name: string, code: string): string {
  return `const ${name} = (function () {\nconst exports = {};\n${code}\nreturn exports;\n})();\n`;
}

function table(name: string, doc: string, source: string, ids: string[], prefix: string): string {
  const rows = ids.map((id) => `  ${JSON.stringify(id)}: ${source}[${JSON.stringify(prefix + id)}],`).join('\n');
  return `/** ${doc} */\nconst ${name} = Object.freeze({\n${rows}\n});\n`;
}

/**
 * Compiles the validators of every operation and returns the three generated
 * files. Body validators exist for operations with an `application/json`
 * request body, response validators for operations whose success body is
 * JSON, query validators for every operation. Throws when ajv rejects a
 * schema (strict mode: unknown keywords and formats are errors).
 */
export function renderValidators(doc: OpenApiDoc, ops: OperationInfo[]): { cjs: string; dts: string } {
  const strictAjv = newAjv(doc, false);
  const queryAjv = newAjv(doc, true);
  const strictRefs: Record<string, string> = {};
  const queryRefs: Record<string, string> = {};
  const bodyIds: string[] = [];
  const responseIds: string[] = [];
  for (const op of ops) {
    const id = op.operationId;
    const add = (ajv: Ajv2020, refs: Record<string, string>, kind: string, schema: Schema) => {
      const key = `https://vigil.invalid/${kind}/${id}`;
      try {
        ajv.addSchema(absoluteRefs(schema), key);
        ajv.getSchema(key);
      } catch (e) {
        throw new Error(`ajv: ${kind} schema of ${id}: ${(e as Error).message}`);
      }
      refs[`${kind}:${id}`] = key;
    };
    if (op.jsonBody) { add(strictAjv, strictRefs, 'body', op.jsonBody); bodyIds.push(id); }
    if (op.successSchema) { add(strictAjv, strictRefs, 'response', op.successSchema); responseIds.push(id); }
    add(queryAjv, queryRefs, 'query', querySchema(op));
  }
  const cjs = [
    GENERATED_HEADER,
    '// ajv standalone validators for request bodies, query strings and success responses.',
    '"use strict";',
    wrap('strictModule', standaloneCode(strictAjv, strictRefs)),
    wrap('queryModule', standaloneCode(queryAjv, queryRefs)),
    table('bodyValidators', 'JSON request bodies by operationId (no coercion, all errors).', 'strictModule', bodyIds, 'body:'),
    table('queryValidators', 'Query objects by operationId (coerces strings, fills defaults, allows unknown keys).', 'queryModule', ops.map((o) => o.operationId), 'query:'),
    table('responseValidators', 'Success response bodies by operationId (JSON responses only).', 'strictModule', responseIds, 'response:'),
    'module.exports = { bodyValidators, queryValidators, responseValidators };',
    '',
  ].join('\n');
  const dts = [
    GENERATED_HEADER,
    "import type { ValidateFunction } from 'ajv';",
    '',
    '/** JSON request body validators by operationId (only operations with a JSON body). Bodies are not coerced; all errors are reported. */',
    'export declare const bodyValidators: Record<string, ValidateFunction>;',
    '/** Query validators by operationId (every operation). They coerce strings to the declared types and fill defaults in place; unknown keys pass. */',
    'export declare const queryValidators: Record<string, ValidateFunction>;',
    '/** Success response validators by operationId (operations with a JSON success body). */',
    'export declare const responseValidators: Record<string, ValidateFunction>;',
    '',
  ].join('\n');
  return { cjs, dts };
}
