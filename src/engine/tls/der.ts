/**
 * Just enough DER to read a certificate's signature algorithm, which Node 20's
 * X509Certificate does not expose (and node-forge is only a dev dependency).
 */

interface Tlv { tag: number; start: number; end: number }

function readTlv(buf: Buffer, offset: number): Tlv | null {
  if (offset + 2 > buf.length) return null;
  const tag = buf[offset];
  let length = buf[offset + 1];
  let start = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || start + bytes > buf.length) return null;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + buf[start + i];
    start += bytes;
  }
  const end = start + length;
  return end > buf.length ? null : { tag, start, end };
}

function decodeOid(bytes: Buffer): string {
  const parts: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if (!(b & 0x80)) { parts.push(value); value = 0; }
  }
  if (parts.length === 0) return '';
  const first = parts[0] < 80 ? [Math.floor(parts[0] / 40), parts[0] % 40] : [2, parts[0] - 80];
  return [...first, ...parts.slice(1)].join('.');
}

/** The OID of the algorithm that signed the certificate (`raw` is DER), or null when it cannot be read. */
export function signatureAlgorithmOid(raw: Buffer): string | null {
  const cert = readTlv(raw, 0);
  if (!cert || cert.tag !== 0x30) return null;
  const tbs = readTlv(raw, cert.start);
  if (!tbs) return null;
  const algorithm = readTlv(raw, tbs.end);
  if (!algorithm || algorithm.tag !== 0x30) return null;
  const oid = readTlv(raw, algorithm.start);
  if (!oid || oid.tag !== 0x06) return null;
  return decodeOid(raw.subarray(oid.start, oid.end));
}

/** Signature algorithms browsers no longer accept, by OID. */
export const WEAK_SIGNATURES: Record<string, string> = {
  '1.2.840.113549.1.1.2': 'MD2 with RSA',
  '1.2.840.113549.1.1.3': 'MD4 with RSA',
  '1.2.840.113549.1.1.4': 'MD5 with RSA',
  '1.2.840.113549.1.1.5': 'SHA-1 with RSA',
  '1.3.14.3.2.29': 'SHA-1 with RSA',
  '1.2.840.10040.4.3': 'DSA with SHA-1',
  '1.2.840.10045.4.1': 'ECDSA with SHA-1',
};
