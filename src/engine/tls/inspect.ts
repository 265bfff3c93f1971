import type { X509Certificate } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import type { Finding } from '../kinds/kind';
import { WEAK_SIGNATURES, signatureAlgorithmOid } from './der';
import { commonName, selfSigned, type ChainReport } from './trust';

const DAY = 86_400_000;

// OpenSSL's verdicts that our own chain walk explains (or, for an incomplete chain completed via AIA, overrules).
const EXPLAINED = new Set([
  'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Inputs of `certificateFindings`. */
export interface CertInputs {
  host: string;
  chain: ChainReport;
  /** The peer certificate as Node reports it, for its host name check. */
  legacy: tls.PeerCertificate;
  /** OpenSSL's verification error code, if any. */
  authorizationError: string | null;
  now: Date;
  warnDays: number;
}

/** Findings about the certificate and its chain: trust, validity, name, key and signature. */
export function certificateFindings(c: CertInputs): Finding[] {
  const out: Finding[] = [];
  const leaf = c.chain.path[0];
  const now = c.now.getTime();

  // Validity of every certificate the server relies on (a trust anchor's own dates are the store's business).
  const relied = c.chain.trusted ? c.chain.path.slice(0, -1) : c.chain.path;
  for (const cert of relied.length ? relied : [leaf]) {
    const what = cert === leaf ? 'the certificate' : `the intermediate ${commonName(cert)}`;
    const notAfter = Date.parse(cert.validTo);
    const notBefore = Date.parse(cert.validFrom);
    if (notAfter < now) out.push({ code: 'cert_expired', severity: 'critical', message: `${what} expired on ${new Date(notAfter).toISOString().slice(0, 10)}` });
    else if (notBefore > now) out.push({ code: 'cert_not_yet_valid', severity: 'critical', message: `${what} is not valid before ${new Date(notBefore).toISOString()}` });
    else if (notAfter - now < c.warnDays * DAY) {
      const days = Math.floor((notAfter - now) / DAY);
      out.push({ code: 'cert_expiring_soon', severity: 'warning', message: `${what} expires in ${days} day${days === 1 ? '' : 's'} (${new Date(notAfter).toISOString().slice(0, 10)})` });
    }
  }

  const mismatch = c.host && !net.isIP(c.host) ? tls.checkServerIdentity(c.host, c.legacy) : ipMismatch(c.host, leaf);
  if (mismatch) {
    const names = leaf.subjectAltName ?? `CN=${commonName(leaf)}`;
    out.push({ code: 'cert_hostname_mismatch', severity: 'critical', message: `the certificate does not cover ${c.host} (it names ${names})` });
  }

  if (c.chain.selfSignedLeaf) {
    out.push({ code: 'cert_self_signed', severity: 'critical', message: 'the certificate is self-signed and not a trusted CA' });
  } else if (!c.chain.trusted) {
    out.push({ code: 'cert_untrusted', severity: 'critical', message: `the certificate is not trusted: ${c.chain.problem}` });
  } else if (c.authorizationError && !EXPLAINED.has(c.authorizationError)) {
    // Our walk found a path but OpenSSL refused it for a reason we do not model (constraints, key usage, ...).
    out.push({ code: 'cert_untrusted', severity: 'critical', message: `the certificate chain does not verify (${c.authorizationError})` });
  }
  if (c.chain.incomplete) {
    const how = c.chain.completedViaAia ? 'browsers can fetch it from the AIA URL, many other clients cannot' : 'and it could not be fetched';
    out.push({ code: 'chain_incomplete', severity: 'warning', message: `the server does not send the intermediate certificate; ${how}` });
  }

  for (const cert of c.chain.trusted ? c.chain.path.slice(0, -1) : c.chain.path) {
    const oid = signatureAlgorithmOid(cert.raw);
    const weak = oid ? WEAK_SIGNATURES[oid] : undefined;
    if (weak && !(cert !== leaf && selfSigned(cert))) {
      out.push({ code: 'cert_weak_signature', severity: 'critical', message: `${cert === leaf ? 'the certificate' : `the intermediate ${commonName(cert)}`} is signed with ${weak}` });
    }
  }

  const key = keyFinding(leaf);
  if (key) out.push(key);
  return out;
}

function ipMismatch(host: string, leaf: X509Certificate): boolean {
  return !leaf.checkIP(host);
}

/** `key_too_short` for RSA/DSA keys under 2048 bits (critical under 1024) and EC keys under 224 bits. */
function keyFinding(leaf: X509Certificate): Finding | null {
  const key = leaf.publicKey;
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (type === 'rsa' || type === 'rsa-pss' || type === 'dsa') {
    const bits = details.modulusLength ?? 0;
    const label = type === 'dsa' ? 'DSA' : 'RSA';
    if (bits < 1024) return { code: 'key_too_short', severity: 'critical', message: `the certificate's ${label} key has ${bits} bits (under 1024 is breakable)` };
    if (bits < 2048) return { code: 'key_too_short', severity: 'warning', message: `the certificate's ${label} key has ${bits} bits (2048 is the minimum today)` };
  }
  if (type === 'ec') {
    const curve = details.namedCurve ?? '';
    const bits = Number(/(\d{3})/.exec(curve)?.[1] ?? 256);
    if (bits < 224) return { code: 'key_too_short', severity: 'critical', message: `the certificate's EC key is on ${curve} (${bits} bits)` };
  }
  return null;
}

/** A short description of the certificate for the `cert_ok` finding. */
export function describeLeaf(leaf: X509Certificate, now: Date): string {
  const notAfter = Date.parse(leaf.validTo);
  const days = Math.floor((notAfter - now.getTime()) / DAY);
  const key = leaf.publicKey;
  const bits = key.asymmetricKeyDetails?.modulusLength;
  const keyText = key.asymmetricKeyType === 'ec' ? `EC ${key.asymmetricKeyDetails?.namedCurve ?? ''}`.trim() : `${(key.asymmetricKeyType ?? '').toUpperCase()} ${bits ?? '?'} bits`;
  return `certificate for ${commonName(leaf)} issued by ${/(?:^|\n)CN=([^\n]+)/.exec(leaf.issuer)?.[1] ?? leaf.issuer}, valid until ${new Date(notAfter).toISOString().slice(0, 10)} (${days} days), ${keyText}`;
}
