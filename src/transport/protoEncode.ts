import {
  fromJson, ScalarType, toBinary,
  type DescField, type DescMessage, type JsonValue,
} from '@bufbuild/protobuf';
import * as writer from './protoWriter';
import type { Write } from './protoWriter';
import * as timestamps from './timestamps';

// Bound once: the module objects a bundler or tsx makes read exports through getters, a cost on every
// call of the hot loop (tens of calls per field, a thousand monitors in a list).
const { begin, bytes, end, LEN, reset, scalarWriter, string, tag, take, varint, zeroTest } = writer;
const { millis } = timestamps;

/**
 * Encodes the JSON shape handlers answer with (empty = null, StringList = plain
 * array, timestamps as RFC 3339 strings) straight into protobuf bytes, with one
 * writer per message type compiled from its descriptor on first use: no
 * intermediate message objects, one buffer. The bytes are those protobuf-es
 * writes for the same message (fields by number, proto3 presence rules), which
 * test/proto-encode.test.ts checks on random values of every message.
 * Well-known types other than Timestamp go through protobuf-es.
 */

const STRING_LIST = 'vigil.v1.StringList';
const TIMESTAMP = 'google.protobuf.Timestamp';
const IMPLICIT = 2; // google.protobuf.FeatureSet.FieldPresence.IMPLICIT

type MessageWriter = (v: Record<string, unknown>) => void;
const compiled = new WeakMap<DescMessage, MessageWriter>();

/** The writer of a value of message type `m` as field `no` (with its tag): nested, StringList, Timestamp or another well-known type. */
function messageValue(m: DescMessage, no: number): Write {
  if (m.typeName === STRING_LIST) {
    return (v: string[]) => {
      tag(no, LEN);
      const at = begin();
      for (const s of v) { tag(1, LEN); string(s); }
      end(at);
    };
  }
  if (m.typeName === TIMESTAMP) {
    return (v: unknown) => {
      const ms = millis(v);
      const seconds = Math.floor(ms / 1000);
      const nanos = (ms - seconds * 1000) * 1_000_000;
      tag(no, LEN);
      const at = begin();
      if (seconds !== 0) { tag(1, 0); varint(seconds); }
      if (nanos !== 0) { tag(2, 0); varint(nanos | 0); }
      end(at);
    };
  }
  if (m.typeName.startsWith('google.protobuf.')) {
    return (v: JsonValue) => { tag(no, LEN); bytes(toBinary(m, fromJson(m, v))); };
  }
  let write: MessageWriter | undefined;
  return (v: Record<string, unknown>) => {
    tag(no, LEN);
    const at = begin();
    (write ??= writerOf(m))(v);
    end(at);
  };
}

function fieldWriter(field: DescField): MessageWriter {
  const key = field.jsonName;
  const no = field.number;
  switch (field.fieldKind) {
    case 'scalar':
    case 'enum': {
      const type = field.fieldKind === 'enum' ? ScalarType.INT32 : field.scalar;
      const [write, wireType] = scalarWriter(type);
      const named = field.fieldKind === 'enum' ? field.enum : null;
      const isZero = field.presence === IMPLICIT ? zeroTest(type) : () => false;
      const head = (no << 3) | wireType;
      return (o) => {
        let v = o[key];
        if (v === null || v === undefined) return;
        if (named && typeof v === 'string') v = named.values.find((e) => e.name === v)?.number ?? 0;
        if (isZero(v)) return;
        varint(head);
        write(v);
      };
    }
    case 'message': {
      const write = messageValue(field.message, no);
      return (o) => { const v = o[key]; if (v !== null && v !== undefined) write(v); };
    }
    case 'list': {
      if (field.listKind === 'message') {
        const write = messageValue(field.message, no);
        return (o) => { const v = o[key] as unknown[] | null | undefined; if (v) for (const x of v) write(x); };
      }
      const type = field.listKind === 'enum' ? ScalarType.INT32 : field.scalar;
      const [write, wireType] = scalarWriter(type);
      if (field.packed) {
        return (o) => {
          const v = o[key] as unknown[] | null | undefined;
          if (!v?.length) return;
          tag(no, LEN);
          const at = begin();
          for (const x of v) write(x);
          end(at);
        };
      }
      return (o) => { const v = o[key] as unknown[] | null | undefined; if (v) for (const x of v) { tag(no, wireType); write(x); } };
    }
    case 'map': {
      const [writeKey, keyWire] = scalarWriter(field.mapKey);
      // Map keys are object keys, so strings: back to the key's own type (64-bit ones stay strings, as protobuf-es takes them).
      const keyOf = field.mapKey === ScalarType.STRING ? (k: string) => k
        : field.mapKey === ScalarType.BOOL ? (k: string) => k === 'true'
          : [ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64].includes(field.mapKey) ? (k: string) => k
            : (k: string) => Number.parseInt(k, 10);
      let value: Write;
      if (field.mapKind === 'message') {
        value = messageValue(field.message, 2);
      } else {
        const [w, wt] = scalarWriter(field.mapKind === 'enum' ? ScalarType.INT32 : field.scalar);
        value = (v: unknown) => { tag(2, wt); w(v); };
      }
      return (o) => {
        const v = o[key] as Record<string, unknown> | null | undefined;
        if (!v) return;
        for (const k of Object.keys(v)) {
          tag(no, LEN);
          const at = begin();
          tag(1, keyWire);
          writeKey(keyOf(k));
          value(v[k]);
          end(at);
        }
      };
    }
  }
}

function writerOf(schema: DescMessage): MessageWriter {
  let w = compiled.get(schema);
  if (w) return w;
  const fields: MessageWriter[] = [];
  w = (v) => { for (let i = 0; i < fields.length; i++) fields[i](v); };
  // Registered before its fields compile, so recursive types find it.
  compiled.set(schema, w);
  for (const f of [...schema.fields].sort((a, b) => a.number - b.number)) fields.push(fieldWriter(f));
  return w;
}

/** Whether this encoder can write `schema` (no oneofs anywhere: their JSON shape is not a plain field). */
function supported(schema: DescMessage, seen = new Set<DescMessage>()): boolean {
  if (seen.has(schema)) return true;
  seen.add(schema);
  if (schema.oneofs.length) return false;
  return schema.fields.every((f) => !('message' in f) || !f.message || f.message.typeName.startsWith('google.protobuf.') || supported(f.message, seen));
}

const supportedCache = new WeakMap<DescMessage, boolean>();

/** True when `encodeShape` writes `schema` itself rather than calling its fallback. */
export function directlyEncodable(schema: DescMessage): boolean {
  let ok = supportedCache.get(schema);
  if (ok === undefined) supportedCache.set(schema, (ok = supported(schema)));
  return ok;
}

/** Encodes a JSON-shaped value as the binary message `schema`; `fallback` for shapes this encoder does not know. */
export function encodeShape(schema: DescMessage, value: Record<string, unknown>, fallback: () => Uint8Array): Uint8Array {
  if (!directlyEncodable(schema)) return fallback();
  reset();
  writerOf(schema)(value);
  return take();
}
