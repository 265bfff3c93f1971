import type { Finding } from '../kinds/kind';
import { guardedLookup, type NetPolicy } from '../../net/policy';
import type { CheckResolver } from '../dns/resolver';
import { fetchSmall } from '../tls/fetch';
import { parseTags, versioned } from './tags';

/** A parsed MTA-STS policy file (RFC 8461 §3.2). */
export interface StsPolicy { mode: string; maxAge: number; mx: string[] }

/** Parses a policy file; returns the policy or the first problem found. */
export function parsePolicy(text: string): StsPolicy | string {
  const fields = new Map<string, string[]>();
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return `line "${line.slice(0, 60)}" is not "key: value"`;
    const key = line.slice(0, colon).trim().toLowerCase();
    fields.set(key, [...(fields.get(key) ?? []), line.slice(colon + 1).trim()]);
  }
  if (fields.get('version')?.[0] !== 'STSv1') return 'version is not STSv1';
  const mode = fields.get('mode')?.[0] ?? '';
  if (!['enforce', 'testing', 'none'].includes(mode)) return `mode "${mode}" is not enforce, testing or none`;
  const maxAgeText = fields.get('max_age')?.[0] ?? '';
  const maxAge = Number(maxAgeText);
  if (!/^\d{1,10}$/.test(maxAgeText) || maxAge > 31_557_600) return `max_age "${maxAgeText}" is not a number of seconds up to 31557600`;
  const mx = (fields.get('mx') ?? []).map((m) => m.toLowerCase().replace(/\.$/, ''));
  if (mode !== 'none' && mx.length === 0) return 'no mx: lines';
  return { mode, maxAge, mx };
}

/** True when MX host `host` matches a policy `mx:` pattern (`*.` covers exactly one label). */
export function mxMatches(pattern: string, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (pattern.startsWith('*.')) {
    const rest = pattern.slice(2);
    return h.endsWith(`.${rest}`) && !h.slice(0, -rest.length - 1).includes('.');
  }
  return h === pattern;
}

/** What the MTA-STS check needs besides the resolver. */
export interface StsContext {
  policy: NetPolicy;
  signal: AbortSignal;
  /** True when the check has a configured resolver, whose answers the fetch then uses (else the system's, through guardedLookup). */
  ownResolver: boolean;
  /** Port of the policy host; 443 unless a test or an unusual deployment says otherwise. */
  port: number;
  /** The domain's MX hosts (empty for none or a null MX). */
  mxHosts: string[];
}

/**
 * MTA-STS of `domain`: the `_mta-sts` TXT record (`v=STSv1; id=...`) and the
 * policy at `https://mta-sts.<domain>/.well-known/mta-sts.txt` (certificate
 * verified, no redirects), whose mode and mx: patterns must cover every MX
 * host. Absent is info (it is optional). Throws when the TXT lookup fails.
 */
export async function mtaStsFindings(r: CheckResolver, domain: string, ctx: StsContext): Promise<Finding[]> {
  const records = versioned(await r.txt(`_mta-sts.${domain}`), 'STSv1');
  if (records.length === 0) return [{ code: 'mta_sts_missing', severity: 'info', message: `no MTA-STS record (TXT v=STSv1) at _mta-sts.${domain}` }];
  if (records.length > 1) return [{ code: 'mta_sts_invalid', severity: 'warning', message: `${records.length} MTA-STS records at _mta-sts.${domain}; senders ignore them all` }];
  const id = parseTags(records[0])?.get('id') ?? '';
  if (!/^[A-Za-z0-9]{1,32}$/.test(id)) {
    return [{ code: 'mta_sts_invalid', severity: 'warning', message: `the MTA-STS record needs id= of 1 to 32 letters and digits: ${records[0]}` }];
  }
  const host = `mta-sts.${domain}`;
  const url = new URL(`https://${host}/.well-known/mta-sts.txt`);
  let text: string;
  try {
    const res = await fetchSmall(url, {
      policy: ctx.policy, signal: ctx.signal, port: ctx.port, timeoutMs: 10_000, maxBytes: 64 * 1024,
      lookup: ctx.ownResolver ? r.lookup(ctx.policy) : guardedLookup(ctx.policy),
    });
    if (res.status !== 200) return [{ code: 'mta_sts_policy_unreachable', severity: 'warning', message: `${url.href} answered HTTP ${res.status}` }];
    text = res.body.toString('utf8');
  } catch (e) {
    const err = e as Error & { code?: string };
    return [{ code: 'mta_sts_policy_unreachable', severity: 'warning', message: `${url.href} could not be fetched: ${err.message}${err.code && !err.message.includes(err.code) ? ` (${err.code})` : ''}` }];
  }
  const policy = parsePolicy(text);
  if (typeof policy === 'string') return [{ code: 'mta_sts_policy_invalid', severity: 'warning', message: `the MTA-STS policy is not valid: ${policy}` }];
  const out: Finding[] = [];
  if (policy.mode !== 'none') {
    const uncovered = ctx.mxHosts.filter((h) => !policy.mx.some((p) => mxMatches(p, h)));
    if (uncovered.length > 0) {
      // In enforce mode senders refuse to deliver to an MX the policy does not list.
      out.push({
        code: 'mta_sts_mx_mismatch', severity: policy.mode === 'enforce' ? 'critical' : 'warning',
        message: `MX ${uncovered.join(', ')} not covered by the MTA-STS policy (mx: ${policy.mx.join(', ')})`,
      });
    }
  }
  if (policy.mode === 'enforce') out.push({ code: 'mta_sts_ok', severity: 'info', message: `MTA-STS enforced (id ${id}, max_age ${policy.maxAge})` });
  else out.push({ code: 'mta_sts_not_enforced', severity: 'info', message: `MTA-STS mode is ${policy.mode}: senders do not refuse insecure delivery` });
  return out;
}
