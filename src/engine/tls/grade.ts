import type { Finding } from '../kinds/kind';

/** Grades from best to worst; T (trust) is outside the scale and handled apart. */
const SCALE = ['A+', 'A', 'A-', 'B', 'C', 'D', 'E', 'F'] as const;
type Grade = typeof SCALE[number] | 'T';

/** Findings that make the certificate untrusted: the grade is T whatever else. */
export const TRUST_CODES = new Set([
  'cert_expired', 'cert_not_yet_valid', 'cert_hostname_mismatch', 'cert_self_signed', 'cert_untrusted', 'cert_weak_signature',
]);

/** The highest grade a finding allows (after SSL Labs' rating guide), or null when it caps nothing. */
export function capOf(f: Finding): Grade | null {
  switch (f.code) {
    case 'key_too_short': return f.severity === 'critical' ? 'F' : 'B';
    case 'weak_cipher': return f.severity === 'critical' ? 'F' : 'C';
    case 'tls12_missing': return 'C';
    case 'tls10_accepted': case 'tls11_accepted': case 'no_forward_secrecy': case 'no_aead': case 'chain_incomplete': return 'B';
    default: return null;
  }
}

const worse = (a: Grade, b: Grade): Grade => (SCALE.indexOf(a as never) >= SCALE.indexOf(b as never) ? a : b);

/** The grade, and the grade the server would have if its certificate were trusted (for T). */
export interface Grading { grade: Grade; ifTrusted: Grade }

/**
 * Grades the findings: T for any trust problem; otherwise A capped by each
 * finding's cap; an A with any warning is A-; an A with no warning and an
 * HSTS max-age of at least 180 days is A+. D and E are not produced: there is
 * no numeric score behind the caps.
 */
export function grade(findings: Finding[], hstsMaxAge: number | null): Grading {
  let g: Grade = 'A';
  for (const f of findings) {
    const cap = capOf(f);
    if (cap) g = worse(g, cap);
  }
  const nonTrust = findings.filter((f) => !TRUST_CODES.has(f.code));
  if (g === 'A' && nonTrust.some((f) => f.severity !== 'info')) g = 'A-';
  if (g === 'A' && hstsMaxAge !== null && hstsMaxAge >= HSTS_MIN_AGE) g = 'A+';
  return { grade: findings.some((f) => TRUST_CODES.has(f.code)) ? 'T' : g, ifTrusted: g };
}

/** The HSTS max-age SSL Labs asks for an A+: 180 days. */
export const HSTS_MIN_AGE = 180 * 86_400;

/** Findings about the negotiated suite. */
export function cipherFindings(protocol: string, cipher: string): Finding[] {
  const out: Finding[] = [];
  const name = cipher.toUpperCase();
  if (protocol === 'TLSv1.3') return out; // TLS 1.3 suites are all forward-secret AEAD
  if (/NULL|EXP|RC4|MD5|ADH|AECDH|ANON/.test(name) || /(^|-)DES-CBC-/.test(name)) {
    out.push({ code: 'weak_cipher', severity: 'critical', message: `the server negotiated ${cipher}, which offers no or broken encryption` });
  } else if (/3DES|DES-CBC3|IDEA/.test(name)) {
    out.push({ code: 'weak_cipher', severity: 'warning', message: `the server negotiated ${cipher}, a 64-bit block cipher (Sweet32)` });
  }
  if (!/^(ECDHE|DHE|EDH)-/.test(name)) {
    out.push({ code: 'no_forward_secrecy', severity: 'warning', message: `the server negotiated ${cipher}, without forward secrecy (no ephemeral key exchange)` });
  }
  if (!/GCM|CHACHA20|CCM/.test(name)) {
    out.push({ code: 'no_aead', severity: 'warning', message: `the server negotiated ${cipher}, not an AEAD suite (GCM, ChaCha20-Poly1305, CCM)` });
  }
  return out;
}
