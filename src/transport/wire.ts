import {
  create, fromBinary, fromJson, ScalarType, toBinary, toJson,
  type DescField, type DescMessage, type JsonObject, type JsonValue,
} from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { encodeShape } from './protoEncode';

/**
 * One generic converter between the JSON shape handlers speak (empty = null,
 * StringList = plain array or null) and protobuf messages (empty = absent),
 * driven by the message descriptors alone: no per-resource code.
 */

const STRING_LIST = 'vigil.v1.StringList';
const isWkt = (m: DescMessage) => m.typeName.startsWith('google.protobuf.');

function inValue(field: DescField, v: JsonValue): unknown {
  if (field.fieldKind === 'message') {
    if (field.message.typeName === STRING_LIST) return ((v as JsonObject).values as JsonValue[] | undefined) ?? [];
    return isWkt(field.message) ? v : fromProtoJson(field.message, v as JsonObject, 'response');
  }
  if (field.fieldKind === 'list' && field.listKind === 'message' && !isWkt(field.message)) {
    return (v as JsonObject[]).map((x) => fromProtoJson(field.message, x, 'response'));
  }
  return v;
}

/**
 * The JSON shape of a proto3 JSON object. `response`: every field present, null
 * for absent ones. `request`: absent fields stay absent (not sent ≠ null).
 */
export function fromProtoJson(schema: DescMessage, json: JsonObject, mode: 'request' | 'response'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) {
    const v = json[field.jsonName];
    if (v === undefined || v === null) {
      if (mode === 'request') continue;
      out[field.jsonName] = field.fieldKind === 'list' ? [] : field.fieldKind === 'map' ? {} : null;
      continue;
    }
    out[field.jsonName] = inValue(field, v);
  }
  return out;
}

const TIMESTAMP = 'google.protobuf.Timestamp';
const JSON_WKT = new Set(['google.protobuf.Struct', 'google.protobuf.Value', 'google.protobuf.ListValue']);

/** The init value of a message-typed value: nested init, Timestamp, or a well-known type. */
function messageInit(m: DescMessage, v: unknown): unknown {
  if (m.typeName === STRING_LIST) return { values: v };
  if (m.typeName === TIMESTAMP) return timestampFromMs(v instanceof Date ? v.getTime() : Date.parse(String(v)));
  // protobuf-es holds Struct, Value and ListValue fields as plain JSON.
  if (JSON_WKT.has(m.typeName)) return v;
  return isWkt(m) ? fromJson(m, v as JsonValue) : toInit(m, v as Record<string, unknown>);
}

function initValue(field: DescField, v: unknown): unknown {
  if (field.fieldKind === 'message') return messageInit(field.message, v);
  if (field.fieldKind === 'list' && field.listKind === 'message') return (v as unknown[]).map((x) => messageInit(field.message, x));
  if (field.fieldKind === 'map' && field.mapKind === 'message') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = messageInit(field.message, x);
    return out;
  }
  if (field.fieldKind === 'scalar' && typeof v === 'string' && field.scalar === ScalarType.BYTES) return Buffer.from(v, 'base64');
  return v;
}

/** The init object of `schema` for a JSON-shaped value, in one walk (nulls dropped). */
function toInit(schema: DescMessage, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) {
    const v = value[field.jsonName];
    if (v === null || v === undefined) continue;
    out[field.localName] = initValue(field, v);
  }
  return out;
}

/** Encodes a JSON-shaped value as the binary message `schema` (directly; via protobuf-es for shapes the direct encoder does not know). */
export function encodeMessage(schema: DescMessage, value: Record<string, unknown>): Uint8Array {
  return encodeShape(schema, value, () => referenceEncoding(schema, value));
}

/** What protobuf-es writes for a JSON-shaped value: the reference the direct encoder is tested against. */
export function referenceEncoding(schema: DescMessage, value: Record<string, unknown>): Uint8Array {
  return toBinary(schema, create(schema, toInit(schema, value) as never));
}

/** Decodes a binary request message into the JSON shape (absent fields left out). */
export function decodeRequest(schema: DescMessage, bytes: Uint8Array): Record<string, unknown> {
  return fromProtoJson(schema, toJson(schema, fromBinary(schema, bytes)) as JsonObject, 'request');
}

/** The JSON shape of an already-decoded message (Connect hands messages over decoded). */
export function messageToShape(schema: DescMessage, message: unknown, mode: 'request' | 'response'): Record<string, unknown> {
  return fromProtoJson(schema, toJson(schema, message as never, { alwaysEmitImplicit: mode === 'response' }) as JsonObject, mode);
}

/** A message built from a JSON-shaped value (for Connect responses). */
export function shapeToMessage(schema: DescMessage, value: Record<string, unknown>): unknown {
  return create(schema, toInit(schema, value) as never);
}
