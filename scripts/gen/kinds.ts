/**
 * The shared vocabulary of the consistency check: both an OpenAPI property and
 * a proto field are reduced to a {@link FieldKind}, and two kinds agree when
 * their {@link describeKind} strings are equal.
 */
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { schemaRefName, type OpenApiDoc, type Schema } from './contract';

/** The wire shape of one field, independent of OpenAPI or proto spelling. */
export type Kind =
  | { k: 'string' | 'int' | 'double' | 'bool' | 'bytes' | 'timestamp' | 'struct' | 'map' }
  | { k: 'message'; name: string }
  | { k: 'list'; item: Kind }
  | { k: 'other'; what: string };

/** A kind plus whether the value can be null (OpenAPI) or has presence (proto). */
export interface FieldKind {
  kind: Kind;
  /** OpenAPI: the schema admits null. Proto: the field tracks presence (proto3 optional or a message). */
  nullable: boolean;
  /** Why the OpenAPI schema falls outside the conventions, if it does. */
  invalid?: string;
}

const PKG = 'vigil.v1';
const SCALARS = new Set(['string', 'int', 'double', 'bool', 'bytes']);

/** A readable, comparable spelling of a kind: `string`, `list<message vigil.v1.Monitor>`. */
export function describeKind(kind: Kind): string {
  switch (kind.k) {
    case 'message': return `message ${kind.name}`;
    case 'list': return `list<${describeKind(kind.item)}>`;
    case 'other': return kind.what;
    default: return kind.k;
  }
}

/** True for the kinds proto carries as a singular scalar (where null needs `optional`). */
export function isScalar(kind: Kind): boolean {
  return SCALARS.has(kind.k);
}

/**
 * True when a component schema is shaped like a message (an object with
 * declared properties or closed with `additionalProperties: false`). Such a
 * schema must have a proto message of the same name; other components
 * (free-form objects, string enums) are inlined where they are referenced.
 */
export function isMessageShaped(schema: Schema | undefined): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('object') && (schema.properties !== undefined || schema.additionalProperties === false);
}

function bad(why: string): FieldKind {
  return { kind: { k: 'other', what: `invalid (${why})` }, nullable: false, invalid: why };
}

/**
 * Reduces an OpenAPI property schema to a {@link FieldKind} following the
 * table in docs/contract.md. Never throws: a schema outside the conventions
 * comes back with `invalid` set to the reason.
 */
export function openApiKind(doc: OpenApiDoc, s: Schema | undefined, depth = 0): FieldKind {
  if (!s || typeof s !== 'object') return bad('no schema');
  if (depth > 20) return bad('$ref cycle');
  const ref = schemaRefName(s);
  if (ref !== null) {
    if (ref === 'StringList') return { kind: { k: 'message', name: `${PKG}.StringList` }, nullable: true };
    const target = doc.components?.schemas?.[ref];
    if (!target) return bad(`unresolved $ref ${s.$ref}`);
    if (isMessageShaped(target)) return { kind: { k: 'message', name: `${PKG}.${ref}` }, nullable: false };
    return openApiKind(doc, target, depth + 1);
  }
  if (typeof s.$ref === 'string') return bad(`unsupported $ref ${s.$ref}`);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (!Array.isArray(s[key])) continue;
    const variants: Schema[] = s[key];
    const nonNull = variants.filter((v) => v?.type !== 'null');
    if (nonNull.length !== 1) return bad(`${key} with ${nonNull.length} non-null variants`);
    const inner = openApiKind(doc, nonNull[0], depth + 1);
    return { ...inner, nullable: inner.nullable || nonNull.length < variants.length };
  }
  if (Array.isArray(s.allOf)) {
    if (s.allOf.length !== 1) return bad('allOf with several parts');
    return openApiKind(doc, s.allOf[0], depth + 1);
  }
  const types: string[] = Array.isArray(s.type) ? s.type : s.type !== undefined ? [s.type] : [];
  const nullable = types.includes('null');
  const rest = types.filter((t) => t !== 'null');
  if (rest.length === 0) {
    const values: unknown[] = Array.isArray(s.enum) ? s.enum : 'const' in s ? [s.const] : [];
    const nonNull = values.filter((v) => v !== null);
    if (nonNull.length > 0 && nonNull.every((v) => typeof v === 'string')) {
      return { kind: { k: 'string' }, nullable: nullable || values.includes(null) };
    }
    return bad('no type');
  }
  if (rest.length > 1) return bad(`several types ${rest.join('|')}`);
  switch (rest[0]) {
    case 'string':
      if (s.format === 'date-time') return { kind: { k: 'timestamp' }, nullable };
      if (s.contentEncoding === 'base64' || s.format === 'byte' || s.format === 'binary') return { kind: { k: 'bytes' }, nullable };
      return { kind: { k: 'string' }, nullable };
    case 'integer': return { kind: { k: 'int' }, nullable };
    case 'number': return { kind: { k: 'double' }, nullable };
    case 'boolean': return { kind: { k: 'bool' }, nullable };
    case 'array': {
      const item = openApiKind(doc, s.items, depth + 1);
      if (item.invalid) return bad(`items: ${item.invalid}`);
      if (item.nullable && item.kind.k !== 'message') return bad('array items must not be null');
      return { kind: { k: 'list', item: item.kind }, nullable };
    }
    case 'object': {
      if (s.properties && Object.keys(s.properties).length > 0) return bad('inline object with properties (use a $ref to a component)');
      const ap = s.additionalProperties;
      if (ap && typeof ap === 'object' && Object.keys(ap).length > 0) {
        const inner = openApiKind(doc, ap, depth + 1);
        if (inner.kind.k === 'string' && !inner.nullable) return { kind: { k: 'map' }, nullable };
        return bad(`map of ${describeKind(inner.kind)} (only string maps are supported)`);
      }
      if (ap === false) return bad('closed object without properties');
      return { kind: { k: 'struct' }, nullable };
    }
    default:
      return bad(`type ${rest[0]}`);
  }
}

function scalarKind(t: ScalarType): Kind {
  switch (t) {
    case ScalarType.STRING: return { k: 'string' };
    case ScalarType.INT32: case ScalarType.UINT32: case ScalarType.SINT32: return { k: 'int' };
    case ScalarType.DOUBLE: case ScalarType.FLOAT: return { k: 'double' };
    case ScalarType.BOOL: return { k: 'bool' };
    case ScalarType.BYTES: return { k: 'bytes' };
    default: return { k: 'other', what: ScalarType[t].toLowerCase() };
  }
}

function messageKind(m: DescMessage): Kind {
  if (m.typeName === 'google.protobuf.Timestamp') return { k: 'timestamp' };
  if (m.typeName === 'google.protobuf.Struct') return { k: 'struct' };
  return { k: 'message', name: m.typeName };
}

/** Reduces a proto field to a {@link FieldKind}; `nullable` means the field tracks presence. */
export function protoKind(f: DescField): FieldKind {
  switch (f.fieldKind) {
    case 'scalar': return { kind: scalarKind(f.scalar), nullable: f.proto.proto3Optional === true || f.oneof !== undefined };
    case 'enum': return { kind: { k: 'other', what: `enum ${f.enum.typeName}` }, nullable: f.proto.proto3Optional === true };
    case 'message': return { kind: messageKind(f.message), nullable: true };
    case 'list': {
      const item: Kind = f.listKind === 'scalar' ? scalarKind(f.scalar)
        : f.listKind === 'message' ? messageKind(f.message)
        : { k: 'other', what: `enum ${f.enum.typeName}` };
      return { kind: { k: 'list', item }, nullable: false };
    }
    case 'map': {
      const ok = f.mapKey === ScalarType.STRING && f.mapKind === 'scalar' && f.scalar === ScalarType.STRING;
      return { kind: ok ? { k: 'map' } : { k: 'other', what: `map<${ScalarType[f.mapKey].toLowerCase()}, ${f.mapKind}>` }, nullable: false };
    }
  }
}

/**
 * Compares an OpenAPI property with a proto field and returns the problems
 * (empty when they agree). `strict` (a required property of a response or
 * resource schema) also requires a non-nullable scalar to be a plain proto3
 * field; request fields and properties that may be absent may carry
 * `optional` for presence even when the value cannot be null.
 */
export function compareField(where: string, oa: FieldKind, pf: FieldKind, strict: boolean): string[] {
  if (oa.invalid) return [`${where}: OpenAPI schema outside the conventions: ${oa.invalid}`];
  const a = describeKind(oa.kind);
  const b = describeKind(pf.kind);
  if (a !== b) return [`${where}: OpenAPI ${oa.nullable ? 'nullable ' : ''}${a} vs proto ${b}`];
  if (isScalar(oa.kind)) {
    if (oa.nullable && !pf.nullable) return [`${where}: OpenAPI nullable ${a} needs proto3 \`optional\``];
    if (strict && !oa.nullable && pf.nullable) return [`${where}: proto field is \`optional\` but OpenAPI ${a} is not nullable`];
  }
  if (oa.nullable && (oa.kind.k === 'list' || oa.kind.k === 'map')) {
    return [`${where}: a nullable ${a} cannot be expressed in proto (use StringList or a message)`];
  }
  return [];
}
