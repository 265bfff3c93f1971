/**
 * The direct protobuf encoder (src/transport/protoEncode.ts) writes exactly the
 * bytes protobuf-es writes, on random JSON-shaped values of every message of
 * the contract.
 */
import { fromBinary, ScalarType, toJson, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { protoRegistry } from '../src/transport/registry';
import { directlyEncodable } from '../src/transport/protoEncode';
import { encodeMessage, referenceEncoding } from '../src/transport/wire';

// A small seeded generator, so a failure can be replayed.
let seed = 20261122;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];

const STRINGS = ['', 'a', 'up', 'Bench Org', 'é', '日本語のテキスト', '😀 emoji', 'lone \ud800 surrogate', 'x'.repeat(42), 'y'.repeat(43),
  'ü'.repeat(42), 'long '.repeat(60), 'https://svc-1.example.com/health?q=1&r=ü'];
const INTS = [0, 1, -1, 127, 128, 300, 16_384, 2 ** 31 - 1, -(2 ** 31), 86_400];
const DOUBLES = [0, -0, 1.5, -2.25, 99.987, 1e300, Number.NaN, 100];

function timestamp(): string {
  const ms = Math.floor(rnd() * 4e12);
  return pick([new Date(ms).toISOString(), new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z'), '1970-01-01T00:00:00.000Z', '2026-11-22T01:02:03.5Z']);
}

function scalar(type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING: return rnd() < 0.1 ? String.fromCharCode(...Array.from({ length: 20 }, () => Math.floor(rnd() * 0xffff))) : pick(STRINGS);
    case ScalarType.BOOL: return rnd() < 0.5;
    case ScalarType.DOUBLE: case ScalarType.FLOAT: return pick(DOUBLES);
    case ScalarType.BYTES: return Buffer.from(pick(STRINGS)).toString('base64');
    default: return pick(INTS);
  }
}

function message(m: DescMessage, depth: number): unknown {
  if (m.typeName === 'vigil.v1.StringList') return Array.from({ length: Math.floor(rnd() * 4) }, () => pick(STRINGS));
  if (m.typeName === 'google.protobuf.Timestamp') return timestamp();
  if (m.typeName === 'google.protobuf.Struct') return { a: 1, b: [true, null, 'x'], c: { d: pick(STRINGS) } };
  if (m.typeName.startsWith('google.protobuf.')) return null;
  return depth > 3 ? null : value(m, depth + 1);
}

function fieldValue(f: DescField, depth: number): unknown {
  if (rnd() < 0.2) return null;
  switch (f.fieldKind) {
    case 'scalar': return scalar(f.scalar);
    case 'enum': return f.enum.values[0].number;
    case 'message': return message(f.message, depth);
    case 'list': return Array.from({ length: Math.floor(rnd() * 4) }, () => (f.listKind === 'message' ? message(f.message, depth) ?? {} : f.listKind === 'enum' ? 0 : scalar(f.scalar)));
    case 'map': return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 3) }, (_, i) => [`k${i}${pick(STRINGS)}`, f.mapKind === 'scalar' ? scalar(f.scalar) : f.mapKind === 'message' ? value(f.message, depth + 1) : 0]));
  }
}

function value(m: DescMessage, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of m.fields) {
    const v = fieldValue(f, depth);
    if (v !== undefined) out[f.jsonName] = v;
  }
  return out;
}

const messages = [...protoRegistry()].filter((t): t is DescMessage => t.kind === 'message' && t.typeName.startsWith('vigil.v1.'));

test('the contract has messages, and the hot ones are encoded directly', () => {
  expect(messages.length).toBeGreaterThan(100);
  for (const name of ['vigil.v1.GetMonitorResponse', 'vigil.v1.ListMonitorsResponse', 'vigil.v1.Monitor']) {
    expect(directlyEncodable(messages.find((m) => m.typeName === name)!)).toBe(true);
  }
});

test.each(messages.map((m) => [m.typeName, m] as const))('%s: same bytes as protobuf-es', (_name, m) => {
  for (let i = 0; i < 60; i++) {
    const v = value(m);
    const direct = Buffer.from(encodeMessage(m, v));
    const reference = Buffer.from(referenceEncoding(m, v));
    if (!direct.equals(reference)) throw new Error(`differs for ${JSON.stringify(v)}:\n direct    ${direct.toString('hex')}\n reference ${reference.toString('hex')}`);
  }
});

test('a large list (length prefixes of several bytes, buffer growth) matches too', () => {
  const list = messages.find((m) => m.typeName === 'vigil.v1.ListMonitorsResponse')!;
  const monitor = messages.find((m) => m.typeName === 'vigil.v1.Monitor')!;
  const v = { data: Array.from({ length: 3000 }, () => ({ ...value(monitor), name: 'n'.repeat(200 + Math.floor(rnd() * 20_000)) })) };
  expect(Buffer.from(encodeMessage(list, v)).equals(Buffer.from(referenceEncoding(list, v)))).toBe(true);
});

test('a Struct field (audit changes) decodes to the JSON it was given', () => {
  const entry = messages.find((m) => m.typeName === 'vigil.v1.AuditEntry')!;
  const changes = { name: { from: 'a', to: 'b' }, tags: { from: ['x'], to: [] }, n: 3, ok: true, none: null };
  const decoded = toJson(entry, fromBinary(entry, encodeMessage(entry, { id: 'au_1', changes }))) as { changes: unknown };
  expect(decoded.changes).toEqual(changes);
});

test('timestamps: every day of years 0 to 9999 reads as Date.parse reads it', () => {
  const monitor = messages.find((m) => m.typeName === 'vigil.v1.Monitor')!;
  for (let i = 0; i < 20_000; i++) {
    const ms = Math.floor(-62_167_219_200_000 + rnd() * (253_402_300_799_999 + 62_167_219_200_000));
    const v = { createdAt: new Date(ms).toISOString(), updatedAt: '2024-02-29T23:59:59.999Z' };
    const direct = Buffer.from(encodeMessage(monitor, v));
    const reference = Buffer.from(referenceEncoding(monitor, v));
    if (!direct.equals(reference)) throw new Error(`differs for ${v.createdAt}`);
  }
  // Odd forms take Date.parse's reading, whatever it is; what it cannot read is an error, not a zero.
  for (const odd of ['2023-02-29T00:00:00.000Z', '2026-11-22T01:02:03Z', '2026-11-22T01:02:03.123456Z', '2026-11-22T01:02:03+02:00']) {
    expect(Buffer.from(encodeMessage(monitor, { createdAt: odd })).equals(Buffer.from(referenceEncoding(monitor, { createdAt: odd })))).toBe(true);
  }
  expect(() => encodeMessage(monitor, { createdAt: 'not a time' })).toThrow(/not a timestamp/);
});

test('an int32 out of range is an error, as in protobuf-es, not a wrapped number', () => {
  const monitor = messages.find((m) => m.typeName === 'vigil.v1.Monitor')!;
  for (const bad of [2 ** 31, 1.5, -(2 ** 31) - 1]) {
    expect(() => encodeMessage(monitor, { intervalSeconds: bad })).toThrow(/int32/);
    expect(() => referenceEncoding(monitor, { intervalSeconds: bad })).toThrow(/int32/);
  }
});
