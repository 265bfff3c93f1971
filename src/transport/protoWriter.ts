import { protoInt64, ScalarType } from '@bufbuild/protobuf';

/**
 * The byte-level half of the direct protobuf encoder (protoEncode.ts): one
 * output buffer reused between messages (encoding is synchronous), varints,
 * tags, length-delimited parts fixed up in place, strings, and the scalar
 * writers by type, with protobuf-es's range checks.
 */

/** Wire type of length-delimited fields. */
export const LEN = 2;

/** The output buffer, reused between calls (encoding is synchronous). */
let buf = Buffer.allocUnsafe(64 * 1024);
let pos = 0;

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  const next = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(next, 0, 0, pos);
  buf = next;
}

/** Writes a varint: non-negative numbers as they are, negative ones as 64-bit two's complement (ten bytes). */
export function varint(n: number): void {
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

/** Writes a field's tag: its number and wire type. */
export const tag = (no: number, wireType: number) => varint(((no << 3) | wireType) >>> 0);

/** Starts a length-delimited part: reserves one byte for its length and returns where its content starts. */
export function begin(): number {
  ensure(1);
  return ++pos;
}

/** Ends the part begun at `start`: writes its length, moving the content when the length needs more than one byte. */
export function end(start: number): void {
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

/** Writes a length-prefixed UTF-8 string (lone surrogates as U+FFFD, as TextEncoder does). */
export function string(s: string): void {
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

/** Writes length-prefixed bytes, given as base64 (the JSON shape) or as bytes. */
export function bytes(v: unknown): void {
  const b = typeof v === 'string' ? Buffer.from(v, 'base64') : (v as Uint8Array);
  varint(b.length);
  ensure(b.length);
  buf.set(b, pos);
  pos += b.length;
}

/** Starts a new message at the beginning of the buffer. */
export function reset(): void {
  pos = 0;
}

/** A copy of what was written since `reset` (the buffer itself is reused). */
export function take(): Buffer {
  return Buffer.from(buf.subarray(0, pos));
}

export type Write = (v: any) => void;

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
export function scalarWriter(type: ScalarType): [Write, number] {
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
export function zeroTest(type: ScalarType): (v: unknown) => boolean {
  switch (type) {
    case ScalarType.STRING: return (v) => v === '';
    case ScalarType.BOOL: return (v) => v === false;
    case ScalarType.BYTES: return (v) => (typeof v === 'string' ? v.length === 0 : (v as Uint8Array).length === 0);
    case ScalarType.DOUBLE: case ScalarType.FLOAT: return (v) => Object.is(v, 0);
    default: return (v) => v == 0;
  }
}
