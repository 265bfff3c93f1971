/**
 * Emits `gen/routes.ts`: the operation table the pipeline reads (permission,
 * bucket, parameters, proto messages) and the typed `Handlers` interface
 * derived from openapi-typescript's `operations`.
 */
import { deref, GENERATED_HEADER, type OpenApiDoc, type OperationInfo } from './contract';

const PKG = 'vigil.v1';
const QUERY_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

function union(values: string[]): string {
  const sorted = [...new Set(values)].sort();
  return sorted.length ? sorted.map((v) => `'${v}'`).join(' | ') : 'never';
}

/** The scalar type of a query or header parameter; throws for anything the query parser cannot produce. */
function queryType(doc: OpenApiDoc, op: OperationInfo, name: string, schema: Record<string, any>): string {
  const s = deref(doc, schema);
  const types: string[] = (Array.isArray(s.type) ? s.type : [s.type]).filter((t: unknown) => t !== 'null' && t !== undefined);
  if (types.length === 0 && Array.isArray(s.enum) && s.enum.every((v: unknown) => typeof v === 'string' || v === null)) return 'string';
  if (types.length !== 1 || !QUERY_TYPES.has(types[0])) {
    throw new Error(`parameter ${name} of ${op.operationId}: type ${JSON.stringify(s.type)} (use string, integer, number or boolean)`);
  }
  return types[0];
}

function routeLiteral(doc: OpenApiDoc, op: OperationInfo): string {
  const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const queryParams = op.queryParams
    .map((p) => `{ name: ${q(p.name)}, type: '${queryType(doc, op, p.name, p.schema)}', required: ${p.required} }`)
    .join(', ');
  const headerParams = op.headerParams
    .map((p) => `{ name: ${q(p.name)}, field: ${q(p.field)}, type: '${queryType(doc, op, p.name, p.schema)}', required: ${p.required} }`)
    .join(', ');
  return [
    '  {',
    `    operationId: ${q(op.operationId)},`,
    `    method: '${op.method.toUpperCase()}',`,
    `    path: ${q(op.path)},`,
    `    expressPath: ${q(op.path.replace(/\{([^}]+)\}/g, ':$1'))},`,
    `    tag: ${q(op.tag)},`,
    `    service: ${q(op.service)},`,
    `    rpc: ${q(op.pascal)},`,
    `    permission: ${op.permission === null ? 'null' : q(op.permission)},`,
    `    permissions: [${op.permissions.map(q).join(', ')}],`,
    `    bucket: ${q(op.bucket)},`,
    `    sessionOnly: ${op.sessionOnly},`,
    `    anonymous: ${op.anonymous},`,
    `    sessionCookie: ${op.sessionCookie === null ? 'null' : q(op.sessionCookie)},`,
    `    rawRequest: ${op.rawRequest},`,
    `    rawResponse: ${op.rawResponse},`,
    `    built: ${op.built},`,
    `    successStatus: ${op.successStatus},`,
    `    pathParams: [${op.pathParams.map((p) => q(p.name)).join(', ')}],`,
    `    queryParams: [${queryParams}],`,
    `    headerParams: [${headerParams}],`,
    `    body: '${op.body}',`,
    `    requestMessage: '${PKG}.${op.pascal}Request',`,
    `    responseMessage: '${PKG}.${op.pascal}Response',`,
    `    summary: ${q(op.summary)},`,
    '  },',
  ].join('\n');
}

const TYPES = `
/** Rate-limit buckets (per organisation). */
export type Bucket = 'R' | 'W' | 'export' | 'sourcemaps' | 'symbols';

/** One query parameter as the query parser must deliver it. */
export interface QueryParamDef {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean';
  required: boolean;
}

/** One header parameter, and the request-message field (JSON name) it fills. */
export interface HeaderParamDef {
  /** As written in the contract, e.g. 'X-Service-Release' (match case-insensitively). */
  name: string;
  /** e.g. 'release' */
  field: string;
  type: 'string' | 'integer' | 'number' | 'boolean';
  required: boolean;
}

/** One operation of the contract, as the pipeline and the transports need it. */
export interface RouteDef {
  operationId: OperationId;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI path relative to /api/v1, e.g. '/monitors/{id}'. */
  path: string;
  /** The same path in Express syntax, e.g. '/monitors/:id'. */
  expressPath: string;
  tag: string;
  /** The proto service (the tag's x-service). */
  service: string;
  /** The RPC name: PascalCase operationId. */
  rpc: string;
  /** Checked before the handler; null when the handler checks per field, or there is none. */
  permission: Permission | null;
  /** Every permission the operation may check (x-permissions, else [x-permission]). */
  permissions: readonly Permission[];
  bucket: Bucket;
  /** API keys get 403 session_required. */
  sessionOnly: boolean;
  /** No credential needed (sign-in, password reset): the rate limit counts by client address. */
  anonymous: boolean;
  /** REST sets the session cookie from data.token ('set'), or clears it when data.current ('clear'). */
  sessionCookie: 'set' | 'clear' | null;
  /** The body is not JSON (the handler gets a Buffer). */
  rawRequest: boolean;
  /** The success body is a file, not {data}. */
  rawResponse: boolean;
  /** False while the contract documents a 501 for it: the feature is not built yet. */
  built: boolean;
  successStatus: 200 | 201;
  pathParams: readonly string[];
  queryParams: readonly QueryParamDef[];
  /** Header parameters (rare: the raw uploads); handlers read them from OperationInput.headers. */
  headerParams: readonly HeaderParamDef[];
  body: 'none' | 'optional' | 'required';
  /** Full proto name of the request message, e.g. 'vigil.v1.CreateMonitorRequest'. */
  requestMessage: string;
  /** Full proto name of the response message, e.g. 'vigil.v1.CreateMonitorResponse'. */
  responseMessage: string;
  summary: string;
}
`;

const DERIVED = `
/**
 * What a raw-response (file) handler returns; the transport sends it as the
 * body. \`content\` is the whole file, or an async iterable of its chunks
 * (a Readable) that REST streams with backpressure (protobuf and Connect
 * answers carry the file in a message, so they buffer it).
 */
export interface FileOutput {
  content: Buffer | string | AsyncIterable<Uint8Array | string>;
  contentType: string;
  filename: string;
}

type Op<K extends OperationId> = operations[K];
type OrEmpty<T> = [T] extends [never] ? {} : [T] extends [undefined] ? {} : NonNullable<T>;
type ParamsOf<O, W extends string> = O extends { parameters: infer P }
  ? W extends keyof P ? OrEmpty<P[W]> : {}
  : {};
type JsonContent<B> = B extends { content: { 'application/json': infer J } } ? J : undefined;
type BodyOf<O> = 'requestBody' extends keyof O
  ? [NonNullable<O['requestBody' & keyof O]>] extends [never]
    ? undefined
    : undefined extends O['requestBody' & keyof O]
      ? JsonContent<NonNullable<O['requestBody' & keyof O]>> | undefined
      : JsonContent<NonNullable<O['requestBody' & keyof O]>>
  : undefined;
type SuccessOf<O> = O extends { responses: infer R }
  ? 200 extends keyof R ? R[200] : 201 extends keyof R ? R[201] : never
  : never;

/** A handler's input: path and query parameters (\`{}\` when none) and the JSON body (\`undefined\` when none; a Buffer for raw requests). */
export type OperationInput<K extends OperationId> = {
  path: ParamsOf<Op<K>, 'path'>;
  query: ParamsOf<Op<K>, 'query'>;
  /** Raw uploads: the file over REST; over Connect, the request message (the file in \`content\`, the headers as fields). */
  body: K extends RawRequestOperationId ? Buffer | Record<string, unknown> : BodyOf<Op<K>>;
  /** The request's headers, lower-cased (raw uploads carry their metadata in them). */
  headers?: Record<string, string | undefined>;
};

/** A handler's output: the JSON body of the success response (200 or 201), or a file for raw responses. */
export type OperationOutput<K extends OperationId> = K extends RawResponseOperationId
  ? FileOutput
  : JsonContent<SuccessOf<Op<K>>>;

/** One async handler per operation; a missing or mistyped handler fails tsc. */
export type Handlers<Ctx> = { [K in OperationId]: (input: OperationInput<K>, ctx: Ctx) => Promise<OperationOutput<K>> };
`;

/**
 * Renders gen/routes.ts for the given (already sorted) operations. The output
 * depends only on the contract, so it is byte-for-byte reproducible.
 */
export function renderRoutes(doc: OpenApiDoc, ops: OperationInfo[]): string {
  const perms = ops.flatMap((o) => [...o.permissions, ...(o.permission ? [o.permission] : [])]);
  const ids = ops.map((o) => o.operationId);
  return [
    GENERATED_HEADER,
    "import type { operations } from './openapi';",
    TYPES,
    '/** Every permission named by x-permission or x-permissions, sorted. */',
    `export type Permission = ${union(perms)};`,
    '',
    '/** Every operationId of the contract. */',
    `export type OperationId = ${union(ids)};`,
    '',
    '/** Operations whose request body is not JSON (x-raw-request). */',
    `export type RawRequestOperationId = ${union(ops.filter((o) => o.rawRequest).map((o) => o.operationId))};`,
    '',
    '/** Operations whose success body is a file (x-raw-response). */',
    `export type RawResponseOperationId = ${union(ops.filter((o) => o.rawResponse).map((o) => o.operationId))};`,
    '',
    '/** Operations not built yet: the contract documents their 501 (src/api/notImplemented.ts answers it). */',
    `export type UnbuiltOperationId = ${union(ops.filter((o) => !o.built).map((o) => o.operationId))};`,
    '',
    '/** Every operation; static path segments come before parameters at the same position, so register them in this order. */',
    'export const routes: readonly RouteDef[] = [',
    ...ops.map((op) => routeLiteral(doc, op)),
    '];',
    DERIVED,
  ].join('\n');
}
