import crypto from 'node:crypto';
import type { Finding } from '../kinds/kind';
import type { CheckResolver } from '../dns/resolver';
import { parseTags, versioned } from './tags';

/**
 * DMARC of `domain`: one `v=DMARC1` record at `_dmarc.<domain>` with p=
 * quarantine or reject (none is a warning) and rua= reporting (info when
 * absent). A subdomain without its own record inherits a parent's (its sp=,
 * else p=), as receivers do; parents are tried up to the last two labels, a
 * stand-in for the organizational domain without the public suffix list.
 * Throws when a lookup fails.
 */
export async function dmarcFindings(r: CheckResolver, domain: string): Promise<Finding[]> {
  const labels = domain.split('.');
  for (let i = 0; i === 0 || labels.length - i >= 2; i++) {
    const at = labels.slice(i).join('.');
    const records = versioned(await r.txt(`_dmarc.${at}`), 'DMARC1');
    if (records.length === 0) continue;
    const inherited = i > 0;
    const where = inherited ? ` (inherited from ${at})` : '';
    if (records.length > 1) return [{ code: 'dmarc_multiple', severity: 'critical', message: `${records.length} DMARC records at _dmarc.${at}; receivers ignore them all` }];
    const tags = parseTags(records[0]);
    const policy = (inherited ? tags?.get('sp') ?? tags?.get('p') : tags?.get('p'))?.toLowerCase();
    if (!tags || !policy || !['none', 'quarantine', 'reject'].includes(policy)) {
      return [{ code: 'dmarc_invalid', severity: 'critical', message: `the DMARC record at _dmarc.${at} has no valid p= policy: ${records[0]}` }];
    }
    const out: Finding[] = [];
    if (policy === 'none') out.push({ code: 'dmarc_policy_none', severity: 'warning', message: `DMARC policy is p=none${where}: failing mail is still delivered` });
    else out.push({ code: 'dmarc_ok', severity: 'info', message: `DMARC policy ${policy}${where}` });
    if (!tags.get('rua')) out.push({ code: 'dmarc_rua_missing', severity: 'info', message: `DMARC asks for no aggregate reports (no rua=)${where}` });
    return out;
  }
  return [{ code: 'dmarc_missing', severity: 'critical', message: `no DMARC record (TXT v=DMARC1) at _dmarc.${domain}` }];
}

/** Bits of an RSA public key given as DKIM p= (base64 SubjectPublicKeyInfo, or bare PKCS#1 as some publish), or null. */
function rsaBits(p: string): number | null {
  const der = Buffer.from(p.replace(/\s+/g, ''), 'base64');
  for (const type of ['spki', 'pkcs1'] as const) {
    try {
      const key = crypto.createPublicKey({ key: der, format: 'der', type });
      return key.asymmetricKeyDetails?.modulusLength ?? null;
    } catch { /* the other encoding */ }
  }
  return null;
}

/**
 * DKIM key of one selector at `<selector>._domainkey.<domain>`: present,
 * not revoked (empty p=), an RSA key of at least 2048 bits (under 1024 is
 * critical) or an Ed25519 key. Throws when the lookup fails.
 */
export async function dkimFindings(r: CheckResolver, domain: string, selector: string): Promise<Finding[]> {
  const name = `${selector}._domainkey.${domain}`;
  // v= is optional in DKIM keys (RFC 6376 §3.6.1); a record with p= is one.
  const records = (await r.txt(name)).filter((t) => /^\s*v\s*=\s*DKIM1\s*(;|$)/i.test(t) || /(^|;)\s*p\s*=/i.test(t));
  if (records.length === 0) return [{ code: 'dkim_missing', severity: 'critical', message: `no DKIM key for selector ${selector} (TXT at ${name})` }];
  const tags = parseTags(records[0]);
  const v = tags?.get('v');
  if (!tags || (v !== undefined && v !== 'DKIM1') || !tags.has('p')) {
    return [{ code: 'dkim_invalid', severity: 'critical', message: `the DKIM record of selector ${selector} is not valid: ${records[0].slice(0, 120)}` }];
  }
  const p = tags.get('p')!;
  if (p === '') return [{ code: 'dkim_revoked', severity: 'critical', message: `the DKIM key of selector ${selector} is revoked (empty p=)` }];
  const k = (tags.get('k') ?? 'rsa').toLowerCase();
  if (k === 'ed25519') {
    const ok = Buffer.from(p, 'base64').length === 32;
    return ok
      ? [{ code: 'dkim_ok', severity: 'info', message: `selector ${selector}: Ed25519 key` }]
      : [{ code: 'dkim_invalid', severity: 'critical', message: `the Ed25519 key of selector ${selector} is not 32 bytes` }];
  }
  const bits = k === 'rsa' ? rsaBits(p) : null;
  if (bits === null) return [{ code: 'dkim_invalid', severity: 'critical', message: `the DKIM key of selector ${selector} cannot be read as a ${k} public key` }];
  if (bits < 1024) return [{ code: 'dkim_weak_key', severity: 'critical', message: `selector ${selector}: RSA key of ${bits} bits (under 1024 can be forged; receivers ignore it)` }];
  if (bits < 2048) return [{ code: 'dkim_weak_key', severity: 'warning', message: `selector ${selector}: RSA key of ${bits} bits (2048 is recommended)` }];
  return [{ code: 'dkim_ok', severity: 'info', message: `selector ${selector}: RSA key of ${bits} bits` }];
}

/**
 * TLS-RPT at `_smtp._tls.<domain>`: one `v=TLSRPTv1` record with rua= of
 * mailto: or https: addresses. Absent is info (it is optional). Throws when
 * the lookup fails.
 */
export async function tlsrptFindings(r: CheckResolver, domain: string): Promise<Finding[]> {
  const name = `_smtp._tls.${domain}`;
  const records = versioned(await r.txt(name), 'TLSRPTv1');
  if (records.length === 0) return [{ code: 'tlsrpt_missing', severity: 'info', message: `no TLS-RPT record (TXT v=TLSRPTv1) at ${name}` }];
  if (records.length > 1) return [{ code: 'tlsrpt_invalid', severity: 'warning', message: `${records.length} TLS-RPT records at ${name}; senders ignore them all` }];
  const rua = parseTags(records[0])?.get('rua') ?? '';
  const targets = rua.split(',').map((t) => t.trim()).filter(Boolean);
  if (targets.length === 0 || !targets.every((t) => /^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/i.test(t))) {
    return [{ code: 'tlsrpt_invalid', severity: 'warning', message: `the TLS-RPT record needs rua= with mailto: or https: addresses: ${records[0]}` }];
  }
  return [{ code: 'tlsrpt_ok', severity: 'info', message: `TLS-RPT reports go to ${targets.join(', ')}` }];
}
