import {
  fromBinary, fromJson, toBinary, toJson,
  type DescField, type DescMessage, type JsonObject, type JsonValue,
} from '@bufbuild/protobuf';

/**
 * One generic converter between the JSON shape handlers speak (empty = null,
 * StringList = plain array or null) and protobuf messages (empty = absent),
 * driven by the message descriptors alone: no per-resource code.
 */

const STRING_LIST = 'vigil.v1.StringList';
const isWkt = (m: DescMessage) => m.typeName.startsWith('google.protobuf.');

function outValue(field: DescField, v: unknown): JsonValue {
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (field.fieldKind === 'message') {
    if (field.message.typeName === STRING_LIST) return { values: v as JsonValue[] };
    return isWkt(field.message) ? (v as JsonValue) : toProtoJson(field.message, v as Record<string, unknown>);
  }
  if (field.fieldKind === 'list' && field.listKind === 'message' && !isWkt(field.message)) {
    return (v as Record<string, unknown>[]).map((x) => toProtoJson(field.message, x));
  }
  if (field.fieldKind === 'list') return (v as unknown[]).map((x) => (x instanceof Date ? x.toISOString() : x)) as JsonValue;
  if (field.fieldKind === 'map' && field.mapKind === 'message' && !isWkt(field.message)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v as Record<string, Record<string, unknown>>)) out[k] = toProtoJson(field.message, x);
    return out;
  }
  return v as JsonValue;
}

/** The proto3 JSON form of a JSON-shaped value (nulls dropped, StringList wrapped). */
export function toProtoJson(schema: DescMessage, value: Record<string, unknown>): JsonObject {
  const out: JsonObject = {};
  for (const field of schema.fields) {
    const v = value[field.jsonName];
    if (v === null || v === undefined) continue;
    out[field.jsonName] = outValue(field, v);
  }
  return out;
}

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

/** Encodes a JSON-shaped value as the binary message `schema`. */
export function encodeMessage(schema: DescMessage, value: Record<string, unknown>): Uint8Array {
  return toBinary(schema, fromJson(schema, toProtoJson(schema, value), { ignoreUnknownFields: true }));
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
  return fromJson(schema, toProtoJson(schema, value), { ignoreUnknownFields: true });
}
