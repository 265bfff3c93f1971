import {
  fromJson, protoInt64, ScalarType, toBinary,
  type DescField, type DescMessage, type JsonValue,
} from '@bufbuild/protobuf';

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
const LEN = 2;

/** The output buffer, reused between calls (encoding is synchronous). */
let buf = Buffer.allocUnsafe(64 * 1024);
let pos = 0;

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  const next = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(next, 0, 0, pos);
  buf = next;
}

function varint(n: number): void {
  ensure(10);
  if (n >= 0 && n <= 0x7fffffff) {
    while (n > 127) {
      buf[pos++] = (n & 127) | 128;
      n >>>= 7;
    }
    buf[pos++] = n;
  } else if (n > 0 && Number.isSafeInteger(n)) {
    while (n > 127) {
      buf[pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    buf[pos++] = n;
  } else {
    const { lo, hi } = protoInt64.enc(n);
    varint64(lo, hi);
  }
}

function varint64(lo: number, hi: number): void {
  ensure(10);
  for (let i = 0; i < 28; i += 7) {
    const shift = lo >>> i;
    const more = !(shift >>> 7 === 0 && hi === 0);
    buf[pos++] = (more ? shift | 0x80 : shift) & 0xff;
    if (!more) return;
  }
  const split = ((lo >>> 28) & 0x0f) | ((hi & 0x07) << 4);
  const more = !(hi >> 3 === 0);
  buf[pos++] = (more ? split | 0x80 : split) & 0xff;
  if (!more) return;
  for (let i = 3; i < 31; i += 7) {
    const shift = hi >>> i;
    const next = !(shift >>> 7 === 0);
    buf[pos++] = (next ? shift | 0x80 : shift) & 0xff;
    if (!next) return;
  }
  buf[pos++] = (hi >>> 31) & 0x01;
}

const tag = (no: number, wireType: number) => varint(((no << 3) | wireType) >>> 0);

/** Starts a length-delimited part: reserves one byte for its length and returns where its content starts. */
function begin(): number {
  ensure(1);
  return ++pos;
}

/** Ends the part begun at `start`: writes its length, moving the content when the length needs more than one byte. */
function end(start: number): void {
  const len = pos - start;
  if (len < 128) {
    buf[start - 1] = len;
    return;
  }
  let size = 1;
  for (let l = len; l >= 128; l >>>= 7) size++;
  ensure(size - 1);
  buf.copyWithin(start + size - 1, start, pos);
  const stop = pos + size - 1;
  let at = start - 1;
  for (let l = len; ; l >>>= 7) {
    if (l < 128) { buf[at] = l; break; }
    buf[at++] = (l & 127) | 128;
  }
  pos = stop;
}

function string(s: string): void {
  if (s.length > 42) {
    const n = Buffer.byteLength(s);
    varint(n);
    ensure(n);
    pos += buf.write(s, pos, n, 'utf8');
    return;
  }
  // At most 126 bytes: a one-byte length, and a loop cheaper than a call into C++.
  ensure(1 + s.length * 3);
  const start = ++pos;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[pos++] = c;
    } else if (c < 0x800) {
      buf[pos++] = 0xc0 | (c >> 6);
      buf[pos++] = 0x80 | (c & 63);
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = s.charCodeAt(i + 1);
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          buf[pos++] = 0xf0 | (c >> 18);
          buf[pos++] = 0x80 | ((c >> 12) & 63);
          buf[pos++] = 0x80 | ((c >> 6) & 63);
          buf[pos++] = 0x80 | (c & 63);
          continue;
        }
        c = 0xfffd; // a lone surrogate, as TextEncoder writes it
      }
      buf[pos++] = 0xe0 | (c >> 12);
      buf[pos++] = 0x80 | ((c >> 6) & 63);
      buf[pos++] = 0x80 | (c & 63);
    }
  }
  buf[start - 1] = pos - start;
}

function bytes(v: unknown): void {
  const b = typeof v === 'string' ? Buffer.from(v, 'base64') : (v as Uint8Array);
  varint(b.length);
  ensure(b.length);
  buf.set(b, pos);
  pos += b.length;
}

/** The number written by `n` decimal digits at `i`, or -1 when one of them is not a digit. */
function digits(s: string, i: number, n: number): number {
  let out = 0;
  for (let k = i; k < i + n; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    out = out * 10 + d;
  }
  return out;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function days(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

/** Milliseconds of an RFC 3339 timestamp (or Date); the `YYYY-MM-DDTHH:MM:SS.mmmZ` the API writes is read digit by digit. */
function millis(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  const s = String(v);
  // The separators of YYYY-MM-DDTHH:MM:SS.mmmZ, then each part in range; anything else is left to Date.parse.
  if (s.length === 24 && s[4] === '-' && s[7] === '-' && s[10] === 'T' && s[13] === ':' && s[16] === ':' && s[19] === '.' && s[23] === 'Z') {
    const y = digits(s, 0, 4);
    const mo = digits(s, 5, 2);
    const d = digits(s, 8, 2);
    const h = digits(s, 11, 2);
    const mi = digits(s, 14, 2);
    const se = digits(s, 17, 2);
    const ms = digits(s, 20, 3);
    if (y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= (mo === 2 && leap(y) ? 29 : MONTH_DAYS[mo - 1])
      && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && se >= 0 && se <= 59 && ms >= 0) {
      return ((days(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + se * 1000 + ms;
    }
  }
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${s.slice(0, 40)}`);
  return ms;
}

type Write = (v: any) => void;

// Like protobuf-es, a value out of its type's range is an error, not silently wrapped.
function int32(v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v > 0x7fffffff || v < -0x80000000) throw new Error(`invalid int32: ${String(v)}`);
  return v;
}
function uint32(v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v > 0xffffffff || v < 0) throw new Error(`invalid uint32: ${String(v)}`);
  return v;
}

/** Writer of one scalar value (no tag), and its wire type. */
function scalarWriter(type: ScalarType): [Write, number] {
  switch (type) {
    case ScalarType.STRING: return [string, LEN];
    case ScalarType.BOOL: return [(v: boolean) => { ensure(1); buf[pos++] = v ? 1 : 0; }, 0];
    case ScalarType.DOUBLE: return [(v: number) => { ensure(8); pos = buf.writeDoubleLE(v, pos); }, 1];
    case ScalarType.FLOAT: return [(v: number) => { ensure(4); pos = buf.writeFloatLE(v, pos); }, 5];
    case ScalarType.INT32: return [(v: number) => varint(int32(v)), 0];
    case ScalarType.UINT32: return [(v: number) => varint(uint32(v)), 0];
    case ScalarType.SINT32: return [(v: number) => { const n = int32(v); varint(((n << 1) ^ (n >> 31)) >>> 0); }, 0];
    case ScalarType.FIXED32: return [(v: number) => { ensure(4); pos = buf.writeUInt32LE(uint32(v), pos); }, 5];
    case ScalarType.SFIXED32: return [(v: number) => { ensure(4); pos = buf.writeInt32LE(int32(v), pos); }, 5];
    case ScalarType.BYTES: return [bytes, LEN];
    case ScalarType.INT64: return [(v: unknown) => { const { lo, hi } = protoInt64.enc(v as never); varint64(lo, hi); }, 0];
    case ScalarType.UINT64: return [(v: unknown) => { const { lo, hi } = protoInt64.uEnc(v as never); varint64(lo, hi); }, 0];
    case ScalarType.SINT64: return [(v: unknown) => {
      const { lo, hi } = protoInt64.enc(v as never);
      const sign = hi >> 31;
      varint64(((lo << 1) ^ sign) >>> 0, (((hi << 1) | (lo >>> 31)) ^ sign) >>> 0);
    }, 0];
    case ScalarType.FIXED64: return [(v: unknown) => { ensure(8); pos = buf.writeBigUInt64LE(protoInt64.uParse(v as never) as bigint, pos); }, 1];
    case ScalarType.SFIXED64: return [(v: unknown) => { ensure(8); pos = buf.writeBigInt64LE(protoInt64.parse(v as never) as bigint, pos); }, 1];
  }
}

/** The proto3 zero-value test of a scalar type (fields with implicit presence omit their zero value). */
function zeroTest(type: ScalarType): (v: unknown) => boolean {
  switch (type) {
    case ScalarType.STRING: return (v) => v === '';
    case ScalarType.BOOL: return (v) => v === false;
    case ScalarType.BYTES: return (v) => (typeof v === 'string' ? v.length === 0 : (v as Uint8Array).length === 0);
    case ScalarType.DOUBLE: case ScalarType.FLOAT: return (v) => Object.is(v, 0);
    default: return (v) => v == 0;
  }
}

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
  pos = 0;
  writerOf(schema)(value);
  return Buffer.from(buf.subarray(0, pos));
}
