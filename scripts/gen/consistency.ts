/**
 * The consistency check between `openapi.yaml` and `proto/`: builds the proto
 * image with buf, loads it with @bufbuild/protobuf and compares both halves of
 * the contract field by field (rules in docs/contract.md).
 *
 * CLI: `tsx scripts/gen/consistency.ts [root]` prints every mismatch and exits 1
 * when there is any.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createFileRegistry, fromBinary, type DescMessage, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { BUCKETS, deref, listOperations, loadOpenApi, schemaRefName, type OpenApiDoc, type OperationInfo, type Schema } from './contract';
import { compareField, describeKind, isMessageShaped, openApiKind, protoKind, type FieldKind } from './kinds';

const PKG = 'vigil.v1';
const NONE: ReadonlySet<string> = new Set();
/** The project root (where node_modules/.bin/buf lives). */
export const PROJECT_ROOT = resolve(__dirname, '../..');

/**
 * Builds the proto image of `<root>/proto` (buf.yaml in `root`) with the
 * project's buf and returns a registry of every file, imports included.
 * Throws with buf's own message when the protos do not compile.
 */
export function loadProtoRegistry(root: string): FileRegistry {
  let bytes: Buffer;
  try {
    bytes = execFileSync(join(PROJECT_ROOT, 'node_modules/.bin/buf'), ['build', '--as-file-descriptor-set', '-o', '-'], {
      cwd: root, maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`buf build failed:\n${err.stderr?.toString() || err.message}`);
  }
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, new Uint8Array(bytes)));
}

/**
 * Compares a message-shaped schema's properties with a message's fields (by
 * JSON name). Properties in `strict` must not be proto3 `optional` unless nullable.
 */
function compareMessage(label: string, props: Map<string, FieldKind>, msg: DescMessage, strict: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const fields = new Map(msg.fields.map((f) => [f.jsonName, f]));
  for (const [name, oa] of props) {
    const f = fields.get(name);
    if (!f) out.push(`${label}.${name}: no field with JSON name "${name}" in ${msg.typeName}`);
    else out.push(...compareField(`${label}.${name}`, oa, protoKind(f), strict.has(name)));
  }
  for (const f of msg.fields) {
    if (!props.has(f.jsonName)) out.push(`${label}: proto field ${msg.typeName}.${f.name} (JSON "${f.jsonName}") has no OpenAPI counterpart`);
  }
  return out;
}

function propertyKinds(doc: OpenApiDoc, schema: Schema): Map<string, FieldKind> {
  return new Map(Object.entries<Schema>(schema.properties ?? {}).map(([k, v]) => [k, openApiKind(doc, v)]));
}

/** Rule 1: every message-shaped component (except StringList and `...Body`) has an identical message. */
function checkSchemas(doc: OpenApiDoc, reg: FileRegistry): string[] {
  const out: string[] = [];
  for (const [name, schema] of Object.entries<Schema>(doc.components?.schemas ?? {})) {
    if (name === 'StringList' || name.endsWith('Body')) continue;
    if (!isMessageShaped(schema)) {
      const k = openApiKind(doc, schema);
      if (k.invalid) out.push(`schema ${name}: neither a message-shaped object nor a supported scalar (${k.invalid})`);
      continue;
    }
    const msg = reg.getMessage(`${PKG}.${name}`);
    if (!msg) out.push(`schema ${name}: no message ${PKG}.${name}`);
    else out.push(...compareMessage(`schema ${name}`, propertyKinds(doc, schema), msg, new Set<string>(schema.required ?? [])));
  }
  if (doc.components?.schemas?.StringList) {
    const sl = reg.getMessage(`${PKG}.StringList`);
    const f = sl?.fields[0];
    if (!sl || sl.fields.length !== 1 || f?.fieldKind !== 'list' || f.listKind !== 'scalar' || f.scalar !== 9) {
      out.push(`schema StringList: needs message ${PKG}.StringList with one field \`repeated string values\``);
    }
  }
  return out;
}

/** The fields the `<Op>Request` message must carry, by JSON name. */
function requestFields(doc: OpenApiDoc, op: OperationInfo, out: string[]): { fields: Map<string, FieldKind>; rawBytes: boolean } {
  const fields = new Map<string, FieldKind>();
  const label = `operation ${op.operationId}`;
  const add = (name: string, kind: FieldKind, from: string) => {
    const before = fields.get(name);
    // A value that may come from the query or the body (e.g. `id`) is one field, provided both agree.
    if (before && describeKind(before.kind) !== describeKind(kind.kind)) {
      out.push(`${label}: "${name}" appears in path/query/header/body with different types (${describeKind(before.kind)}, ${describeKind(kind.kind)} in the ${from})`);
    }
    fields.set(name, before ?? kind);
  };
  for (const p of [...op.pathParams, ...op.queryParams, ...op.headerParams]) add(p.field, openApiKind(doc, p.schema), `${p.in} parameter ${p.name}`);
  let rawBytes = false;
  if (op.body !== 'none') {
    const schema = deref(doc, op.jsonBody ?? op.anyBody ?? {});
    if (isMessageShaped(schema)) {
      const bodyRef = schemaRefName(op.jsonBody ?? undefined);
      if (op.jsonBody && bodyRef !== `${op.pascal}Body`) out.push(`${label}: JSON body should be $ref ${op.pascal}Body`);
      for (const [k, v] of propertyKinds(doc, schema)) add(k, v, 'body');
    } else if (op.rawRequest) {
      rawBytes = true;
    } else {
      out.push(`${label}: request body is neither an object schema nor marked x-raw-request`);
    }
  }
  return { fields, rawBytes };
}

/**
 * The `default` keywords anywhere in a request body schema (through $refs,
 * properties, items and compositions). Generators read `default` as "always
 * present" (openapi-typescript 7 makes such a property required), so a
 * request field's default is said in its description instead.
 */
function requestDefaults(doc: OpenApiDoc, node: Schema | undefined, at: string, seen = new Set<Schema>()): string[] {
  if (!node || typeof node !== 'object' || seen.has(node)) return [];
  seen.add(node);
  const out: string[] = [];
  if (typeof node.$ref === 'string') return requestDefaults(doc, deref(doc, node), at, seen);
  if ('default' in node) out.push(at);
  for (const [k, v] of Object.entries<Schema>(node.properties ?? {})) out.push(...requestDefaults(doc, v, `${at}.${k}`, seen));
  if (node.items) out.push(...requestDefaults(doc, node.items, `${at}[]`, seen));
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) for (const v of node[key] ?? []) out.push(...requestDefaults(doc, v, at, seen));
  return out;
}

/** Rule 2: operation ↔ RPC, request and response messages, and the x-* keys. */
function checkOperation(doc: OpenApiDoc, reg: FileRegistry, op: OperationInfo): string[] {
  const out = [...op.problems];
  const label = `operation ${op.operationId}`;
  if (!op.hasPermissionKey) out.push(`${label}: missing x-permission (use null when the handler checks)`);
  if (!op.hasBucketKey) out.push(`${label}: missing x-bucket`);
  else if (!(BUCKETS as readonly string[]).includes(op.bucket)) out.push(`${label}: x-bucket ${JSON.stringify(op.bucket)} is not one of ${BUCKETS.join(', ')}`);
  if (op.permission !== null && !op.permissions.includes(op.permission)) out.push(`${label}: x-permission ${op.permission} is not listed in x-permissions`);
  if (!op.rawResponse && op.successSchema && schemaRefName(op.successSchema) !== `${op.pascal}Response`) {
    out.push(`${label}: success schema should be $ref ${op.pascal}Response`);
  }
  for (const where of requestDefaults(doc, op.jsonBody ?? undefined, 'body')) {
    out.push(`${label}: ${where} has a \`default\` (client generators then make it required); say the default in its description`);
  }
  if (!op.service) return out;
  const svc = reg.getService(`${PKG}.${op.service}`);
  if (!svc) return [...out, `${label}: no service ${PKG}.${op.service} (x-service of tag ${op.tag})`];
  const rpc = svc.methods.find((m) => m.name === op.pascal);
  if (!rpc) return [...out, `${label}: no rpc ${op.pascal} in ${PKG}.${op.service}`];
  if (rpc.input.typeName !== `${PKG}.${op.pascal}Request`) out.push(`${label}: rpc input is ${rpc.input.typeName}, expected ${PKG}.${op.pascal}Request`);
  if (rpc.output.typeName !== `${PKG}.${op.pascal}Response`) out.push(`${label}: rpc output is ${rpc.output.typeName}, expected ${PKG}.${op.pascal}Response`);

  const { fields, rawBytes } = requestFields(doc, op, out);
  const req = rpc.input;
  if (rawBytes) {
    const extra = req.fields.filter((f) => !fields.has(f.jsonName));
    const bytes = extra.filter((f) => f.fieldKind === 'scalar' && f.scalar === 12);
    if (bytes.length !== 1) out.push(`${label}: raw request body needs exactly one bytes field in ${req.typeName} besides the parameters`);
    else fields.set(bytes[0].jsonName, { kind: { k: 'bytes' }, nullable: false });
  }
  out.push(...compareMessage(`request ${req.typeName}`, fields, req, NONE));

  if (op.rawResponse) {
    const res = rpc.output;
    const want = new Map<string, FieldKind>([
      ['content', { kind: { k: 'bytes' }, nullable: false }],
      ['contentType', { kind: { k: 'string' }, nullable: false }],
      ['filename', { kind: { k: 'string' }, nullable: false }],
    ]);
    if (!doc.components?.schemas?.[`${op.pascal}Response`]) out.push(...compareMessage(`raw response ${res.typeName}`, want, res, new Set(want.keys())));
  }
  return out;
}

/** Rule 3: nothing in the proto package without an OpenAPI counterpart. */
function checkOrphans(doc: OpenApiDoc, reg: FileRegistry, ops: OperationInfo[]): string[] {
  const out: string[] = [];
  const rpcs = new Set(ops.map((o) => `${PKG}.${o.service}/${o.pascal}`));
  const expected = new Set(ops.map((o) => `${PKG}.${o.pascal}Request`));
  for (const [name, s] of Object.entries<Schema>(doc.components?.schemas ?? {})) if (isMessageShaped(s) || name === 'StringList') expected.add(`${PKG}.${name}`);
  for (const o of ops) if (o.rawResponse) expected.add(`${PKG}.${o.pascal}Response`);
  for (const file of reg.files) {
    if (file.proto.package !== PKG) continue;
    for (const m of file.messages) if (!expected.has(m.typeName)) out.push(`proto message ${m.typeName} (${file.name}.proto) has no OpenAPI schema or operation`);
    for (const s of file.services) for (const m of s.methods) {
      if (!rpcs.has(`${s.typeName}/${m.name}`)) out.push(`proto rpc ${s.typeName}.${m.name} has no OpenAPI operation (by tag x-service and operationId)`);
    }
  }
  return out;
}

/**
 * Checks `<root>/openapi.yaml` against `<root>/proto` and returns every
 * mismatch as one readable line (empty array = consistent). Throws only when
 * a file cannot be read or the protos do not compile.
 */
export function checkConsistency(root: string, doc: OpenApiDoc = loadOpenApi(root)): string[] {
  const reg = loadProtoRegistry(root);
  const ops = listOperations(doc);
  const out: string[] = [];
  const ids = new Map<string, number>();
  for (const op of ops) ids.set(op.operationId, (ids.get(op.operationId) ?? 0) + 1);
  for (const [id, n] of ids) if (n > 1) out.push(`operationId ${id} is used ${n} times`);
  out.push(...checkSchemas(doc, reg));
  for (const op of ops) out.push(...checkOperation(doc, reg, op));
  out.push(...checkOrphans(doc, reg, ops));
  return out;
}

if (require.main === module) {
  const root = resolve(process.argv[2] ?? PROJECT_ROOT);
  const problems = checkConsistency(root);
  for (const p of problems) console.error(`  - ${p}`);
  console.error(problems.length ? `consistency: ${problems.length} mismatch(es)` : 'consistency: OpenAPI and proto agree');
  process.exit(problems.length ? 1 : 0);
}
