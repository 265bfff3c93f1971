import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { guardedLookup, type NetPolicy } from '../../net/policy';
import { fetchSmall } from './fetch';

/** The certificates a check trusts, parsed. */
export interface TrustStore { anchors: X509Certificate[]; fingerprints: Set<string> }

let bundled: X509Certificate[] | null = null;
const extraCache = new Map<string, X509Certificate[]>();

function parsePems(text: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const pem of text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []) {
    try { out.push(new X509Certificate(pem)); } catch { /* an unreadable extra CA is not a reason to fail every check */ }
  }
  return out;
}

/** Node's bundle plus the policy's extra CAs (both parsed once and kept). */
export function trustStore(policy: NetPolicy): TrustStore {
  bundled ??= tls.rootCertificates.flatMap(parsePems);
  const extra = policy.extraCa.flatMap((pem) => {
    let certs = extraCache.get(pem);
    if (!certs) { certs = parsePems(pem); extraCache.set(pem, certs); }
    return certs;
  });
  const anchors = [...bundled, ...extra];
  return { anchors, fingerprints: new Set(anchors.map((c) => c.fingerprint256)) };
}

/** True when `issuer` issued `child`: names chain and the signature verifies. */
export function issued(issuer: X509Certificate, child: X509Certificate): boolean {
  try { return child.checkIssued(issuer) && child.verify(issuer.publicKey); } catch { return false; }
}

/**
 * True for a certificate signed by its own key. Not `issued(cert, cert)`:
 * OpenSSL's issuer check wants keyCertSign, which a self-signed leaf lacks.
 */
export function selfSigned(cert: X509Certificate): boolean {
  try { return cert.subject === cert.issuer && cert.verify(cert.publicKey); } catch { return false; }
}

/** What the certificate chain amounts to. */
export interface ChainReport {
  /** From the leaf towards the root, as far as it could be followed (a trust anchor found in the store included). */
  path: X509Certificate[];
  trusted: boolean;
  /** The leaf signed itself and is not itself trusted. */
  selfSignedLeaf: boolean;
  /** The server did not send an issuer needed to reach a trust anchor. */
  incomplete: boolean;
  /** The missing issuer was fetched from the AIA "CA Issuers" URL, which is how browsers cope with an incomplete chain. */
  completedViaAia: boolean;
  /** Why the chain is not trusted, for people. */
  problem: string | null;
}

const CN = (c: X509Certificate) => /(?:^|\n)CN=([^\n]+)/.exec(c.subject)?.[1] ?? c.subject.replace(/\n/g, ', ');

/** Subject common name (or the whole subject) of a certificate, for messages. */
export const commonName = CN;

function aiaIssuerUrls(cert: X509Certificate): string[] {
  return [...(cert.infoAccess ?? '').matchAll(/CA Issuers - URI:(\S+)/g)].map((m) => m[1]).filter((u) => /^https?:\/\//i.test(u));
}

/** Fetches the issuer of `cert` from its AIA URL, or null. */
async function fetchIssuer(cert: X509Certificate, policy: NetPolicy, signal: AbortSignal): Promise<X509Certificate | null> {
  for (const url of aiaIssuerUrls(cert).slice(0, 2)) {
    try {
      const res = await fetchSmall(new URL(url), { policy, lookup: guardedLookup(policy), signal, timeoutMs: 5000, maxBytes: 32 * 1024 });
      if (res.status !== 200) continue;
      const candidate = new X509Certificate(res.body); // DER or PEM; a PKCS#7 bundle throws and is skipped
      if (issued(candidate, cert)) return candidate;
    } catch { /* the next URL, or none */ }
  }
  return null;
}

/**
 * Follows the chain from the leaf: each issuer from the store first (a trust
 * anchor ends the walk), then from what the server sent, then from the AIA
 * URL (marking the chain incomplete). A self-signed certificate not in the
 * store, or an issuer found nowhere, ends it untrusted.
 */
export async function analyzeChain(sent: X509Certificate[], store: TrustStore, policy: NetPolicy, signal: AbortSignal): Promise<ChainReport> {
  const leaf = sent[0];
  const report: ChainReport = { path: [leaf], trusted: false, selfSignedLeaf: false, incomplete: false, completedViaAia: false, problem: null };
  let current = leaf;
  for (let depth = 0; depth < 10; depth++) {
    if (store.fingerprints.has(current.fingerprint256)) { report.trusted = true; return report; }
    if (selfSigned(current)) {
      report.selfSignedLeaf = current === leaf;
      report.problem = current === leaf ? 'the certificate is self-signed' : `the root ${CN(current)} is not a trusted CA`;
      return report;
    }
    const anchor = store.anchors.find((a) => issued(a, current));
    if (anchor) { report.path.push(anchor); report.trusted = true; return report; }
    let next: X509Certificate | null | undefined = sent.find((c) => c !== current && !report.path.includes(c) && issued(c, current));
    if (!next) {
      report.incomplete = true;
      next = await fetchIssuer(current, policy, signal);
      if (!next) {
        report.problem = `the issuer of ${CN(current)} (${current.issuer.replace(/\n/g, ', ')}) was not sent by the server and is not a trusted CA`;
        return report;
      }
      report.completedViaAia = true;
    }
    report.path.push(next);
    current = next;
  }
  report.problem = 'the certificate chain is too long';
  return report;
}
