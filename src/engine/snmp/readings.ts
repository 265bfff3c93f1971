import * as snmp from 'net-snmp';
import type { Reading } from '../kinds/kind';

/** One configured OID: what to ask for and how to label the answer. */
export interface OidSpec { oid: string; name?: string; unit?: string }

/** Turns a varbind into a reading: `error` names the varbind error (noSuchObject ...) when there is one. */
export interface ReadingResult { reading: Reading; error: string | null }

const T = snmp.ObjectType;
const NUMERIC = new Set([T.Integer, T.Counter, T.Gauge, T.TimeTicks, T.Counter32, T.Gauge32, T.Unsigned32, T.Integer32]);
const ERRORS: Record<number, string> = { [T.NoSuchObject]: 'noSuchObject', [T.NoSuchInstance]: 'noSuchInstance', [T.EndOfMibView]: 'endOfMibView' };

/** The OID as net-snmp wants it: no leading dot (the schema allows one). */
export function normaliseOid(oid: string): string {
  return oid.replace(/^\./, '');
}

/** The reading's name: the configured one, else the OID. */
export function readingName(spec: OidSpec): string {
  return spec.name && spec.name.length > 0 ? spec.name : normaliseOid(spec.oid);
}

/** Builds the reading of `spec` from the varbind the agent returned for it. */
export function toReading(spec: OidSpec, varbind: snmp.Varbind | undefined): ReadingResult {
  const base = { name: readingName(spec), oid: normaliseOid(spec.oid), unit: spec.unit ?? null };
  if (!varbind) return { reading: { ...base, value: null, text: 'noResponse' }, error: 'no varbind in the response' };
  const error = ERRORS[varbind.type];
  if (error) return { reading: { ...base, value: null, text: error }, error };
  const { value, text } = decode(varbind);
  return { reading: { ...base, value, text }, error: null };
}

/** A varbind value as a number (integer types) or text (strings, OIDs, addresses). */
function decode(varbind: snmp.Varbind): { value: number | null; text: string | null } {
  const v = varbind.value;
  if (NUMERIC.has(varbind.type)) return { value: Number(v), text: null };
  if (varbind.type === T.Counter64) return counter64(v as Buffer);
  if (varbind.type === T.OctetString) return { value: null, text: octets(v as Buffer) };
  if (varbind.type === T.OID || varbind.type === T.IpAddress) return { value: null, text: String(v) };
  if (varbind.type === T.Boolean) return { value: v ? 1 : 0, text: v ? 'true' : 'false' };
  if (varbind.type === T.Opaque) return { value: null, text: hex(v as Buffer) };
  if (Buffer.isBuffer(v)) return { value: null, text: hex(v) };
  // Null, or a type net-snmp decodes without a value: present, but empty.
  return { value: null, text: v === null || v === undefined ? null : String(v) };
}

/**
 * net-snmp hands a Counter64 over as the raw big-endian bytes of the BER
 * integer (any length, maybe a leading zero). The value becomes a JS number;
 * past 2^53 that rounds, so the exact digits go in `text` then.
 */
export function counter64(bytes: Buffer): { value: number; text: string | null } {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return { value: Number(n), text: n > BigInt(Number.MAX_SAFE_INTEGER) ? n.toString() : null };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An OctetString as text: UTF-8 when it decodes and holds no control
 * characters but tab and line breaks (trailing NULs, which C agents often
 * send, are dropped), else hex pairs like snmpget's "Hex-STRING".
 */
export function octets(bytes: Buffer): string {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  if (end === 0 && bytes.length > 0) return hex(bytes); // all zeros: binary, not an empty string
  try {
    const s = utf8.decode(bytes.subarray(0, end));
    if (!/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(s)) return s;
  } catch {
    // not UTF-8: shown as hex below
  }
  return hex(bytes);
}

function hex(bytes: Buffer): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');
}
