import type { Finding } from '../kinds/kind';
import { describeDnsError, type CheckResolver } from '../dns/resolver';

/** RFC 7208 §4.6.4: more DNS-querying terms than this is a permerror. */
export const SPF_LOOKUP_LIMIT = 10;
/** Past this many counted lookups the walk stops fetching: the verdict is already clear. */
const WALK_CAP = 30;

const isSpf = (txt: string) => /^v=spf1(\s|$)/i.test(txt.trim());

/** SPF records among a name's TXT records. */
export async function spfRecords(r: CheckResolver, name: string): Promise<string[]> {
  return (await r.txt(name)).filter(isSpf);
}

interface Walk {
  r: CheckResolver;
  lookups: number;
  /** Domains whose record is being or has been evaluated (lower case): the loop guard. */
  visited: Set<string>;
  findings: Finding[];
}

const MECHANISM = /^([+\-~?]?)(all|include|a|mx|ptr|ip4|ip6|exists)(?::([^/]*))?(\/\/?\d+){0,2}$/i;
const MODIFIER = /^([a-z][a-z0-9_.-]*)=(.*)$/i;
const COUNTED = new Set(['include', 'a', 'mx', 'ptr', 'exists']);

/**
 * Fetches the SPF record of an include: or redirect= target; reports (and
 * returns null for) a target without exactly one record or one already being
 * evaluated.
 */
async function targetRecord(w: Walk, how: string, target: string): Promise<string | null> {
  const name = target.toLowerCase().replace(/\.$/, '');
  if (w.visited.has(name)) {
    w.findings.push({ code: 'spf_include_loop', severity: 'critical', message: `SPF ${how}:${target} leads back to a record already being evaluated (a loop)` });
    return null;
  }
  let records: string[];
  try {
    records = await spfRecords(w.r, name);
  } catch (e) {
    w.findings.push({ code: 'dns_lookup_failed', severity: 'warning', message: `SPF ${how}:${target}: ${describeDnsError(e, name, 'TXT')}` });
    return null;
  }
  if (records.length !== 1) {
    const why = records.length === 0 ? 'has no SPF record' : `has ${records.length} SPF records`;
    w.findings.push({ code: 'spf_include_invalid', severity: 'critical', message: `SPF ${how}:${target} ${why} (a permanent error for receivers)` });
    return null;
  }
  w.visited.add(name);
  return records[0];
}

/** Evaluates one record, counting lookups recursively; returns the qualifier of its effective `all` (following redirect=), or null. */
async function walk(w: Walk, record: string): Promise<string | null> {
  let all: string | null = null;
  let redirect: string | null = null;
  for (const term of record.trim().split(/\s+/).slice(1)) {
    const mechanism = MECHANISM.exec(term);
    if (mechanism) {
      const [, qualifier, kind, arg] = mechanism;
      const name = kind.toLowerCase();
      if ((name === 'include' || name === 'exists' || name === 'ip4' || name === 'ip6') && !arg) {
        w.findings.push({ code: 'spf_invalid', severity: 'critical', message: `SPF term "${term}" needs an argument` });
        continue;
      }
      if (COUNTED.has(name)) w.lookups++;
      if (name === 'all') { all = qualifier || '+'; break; } // terms after all are never reached
      // Macros (%{i}...) depend on the message: they cannot be followed here, only counted.
      if (name === 'include' && !arg.includes('%') && w.lookups <= WALK_CAP) {
        const included = await targetRecord(w, 'include', arg);
        if (included) await walk(w, included);
      }
      continue;
    }
    const modifier = MODIFIER.exec(term);
    if (modifier) {
      if (modifier[1].toLowerCase() === 'redirect') { redirect = modifier[2]; w.lookups++; }
      continue; // exp= and unknown modifiers do not matter here
    }
    w.findings.push({ code: 'spf_invalid', severity: 'critical', message: `SPF term "${term}" is not valid (a permanent error for receivers)` });
  }
  // redirect= applies only when the record has no all.
  if (all === null && redirect && !redirect.includes('%') && w.lookups <= WALK_CAP) {
    const target = await targetRecord(w, 'redirect', redirect);
    if (target) return walk(w, target);
  }
  return all;
}

/**
 * SPF of `domain`: exactly one `v=spf1` record, an `all` of `-all` or `~all`
 * (following redirect=), and at most 10 DNS-querying terms counting includes
 * and redirects recursively (each target is followed once: a loop is a
 * finding, not a hang). Throws when the domain's own TXT lookup fails.
 */
export async function spfFindings(r: CheckResolver, domain: string): Promise<Finding[]> {
  const records = await spfRecords(r, domain);
  if (records.length === 0) return [{ code: 'spf_missing', severity: 'critical', message: `no SPF record (TXT v=spf1) at ${domain}` }];
  if (records.length > 1) return [{ code: 'spf_multiple', severity: 'critical', message: `${records.length} SPF records at ${domain}; receivers treat that as a permanent error` }];
  const w: Walk = { r, lookups: 0, visited: new Set([domain.toLowerCase()]), findings: [] };
  const all = await walk(w, records[0]);
  const out = w.findings;
  if (w.lookups > SPF_LOOKUP_LIMIT) {
    const count = w.lookups > WALK_CAP ? `more than ${WALK_CAP}` : String(w.lookups);
    out.push({ code: 'spf_too_many_lookups', severity: 'critical', message: `SPF needs ${count} DNS lookups; the limit is ${SPF_LOOKUP_LIMIT} (a permanent error for receivers)` });
  }
  if (all === '+') out.push({ code: 'spf_permissive_all', severity: 'critical', message: 'SPF ends in +all: any server may send as this domain' });
  else if (all === '?') out.push({ code: 'spf_permissive_all', severity: 'warning', message: 'SPF ends in ?all (neutral): it does not say which servers may not send' });
  else if (all === null) out.push({ code: 'spf_all_missing', severity: 'warning', message: 'SPF has no all mechanism: mail from other servers gets a neutral result' });
  if (!out.some((f) => f.severity !== 'info')) {
    out.push({ code: 'spf_ok', severity: 'info', message: `SPF ${records[0]} (${w.lookups} DNS lookup${w.lookups === 1 ? '' : 's'})` });
  }
  return out;
}
