import { hostname, port, type CheckContext, type CheckKind, type CheckResult, type Finding } from './kind';
import { CheckResolver, describeDnsError, dnsErrorKind, resolverSchema } from '../dns/resolver';
import { spfFindings } from '../mail/spf';
import { dkimFindings, dmarcFindings, tlsrptFindings } from '../mail/records';
import { mtaStsFindings } from '../mail/mta_sts';

/** A mail_posture monitor's config after defaults. */
interface MailPostureConfig { domain: string; dkimSelectors: string[]; resolver: string | null; mtaStsPort?: number }

/** MX hosts and their findings. */
interface MxResult { hosts: string[]; findings: Finding[] }

/** MX of `domain`: present (or a deliberate null MX), each host resolving to A/AAAA; IPv6 noted. Throws on lookup failure. */
async function mxFindings(r: CheckResolver, domain: string): Promise<MxResult> {
  let records;
  try {
    records = await r.raw.resolveMx(domain);
  } catch (e) {
    if (dnsErrorKind(e) === 'nodata') return { hosts: [], findings: [{ code: 'mx_missing', severity: 'critical', message: `no MX records for ${domain}` }] };
    throw e;
  }
  if (records.length === 0) return { hosts: [], findings: [{ code: 'mx_missing', severity: 'critical', message: `no MX records for ${domain}` }] };
  // RFC 7505: a single "0 ." says the domain accepts no mail; nothing to resolve.
  if (records.length === 1 && (records[0].exchange === '' || records[0].exchange === '.')) {
    return { hosts: [], findings: [{ code: 'mx_null', severity: 'info', message: `${domain} publishes a null MX: it accepts no mail` }] };
  }
  const hosts = [...new Set(records.sort((a, b) => a.priority - b.priority).map((m) => m.exchange.toLowerCase().replace(/\.$/, '')))];
  const resolved = await Promise.all(hosts.map(async (h) => {
    try { return { host: h, ...(await r.addresses(h)), error: null as string | null }; } catch (e) { return { host: h, v4: [], v6: [], error: describeDnsError(e, h, 'A') }; }
  }));
  const dead = resolved.filter((x) => x.v4.length === 0 && x.v6.length === 0);
  const findings: Finding[] = dead.map((x) => ({
    // One dead MX among live ones delays mail; all dead loses it.
    code: 'mx_unresolvable', severity: dead.length === hosts.length ? 'critical' : 'warning',
    message: `MX ${x.host} does not resolve to an address${x.error ? ` (${x.error})` : ''}`,
  }));
  if (dead.length < hosts.length && !resolved.some((x) => x.v6.length > 0)) {
    findings.push({ code: 'mx_no_ipv6', severity: 'info', message: 'no MX host has an IPv6 address' });
  }
  if (dead.length === 0) findings.unshift({ code: 'mx_ok', severity: 'info', message: `MX: ${hosts.join(', ')}` });
  return { hosts, findings };
}

/** Runs one section; a failed lookup becomes a dns_lookup_failed warning rather than a false "missing". */
async function section(what: string, run: () => Promise<Finding[]>): Promise<Finding[]> {
  try {
    return await run();
  } catch (e) {
    // Resolver errors carry the name and the query (`queryTxt`); anything else is said as it is.
    const err = e as Error & { code?: string; hostname?: string; syscall?: string };
    const type = (err.syscall ?? 'queryTxt').replace(/^query/, '').toUpperCase();
    return [{ code: 'dns_lookup_failed', severity: 'warning', message: `${what}: ${err.code ? describeDnsError(e, err.hostname ?? what, type) : err.message}` }];
  }
}

/**
 * DNS posture of a mail domain: MX, SPF, DMARC, DKIM selectors, MTA-STS,
 * TLS-RPT, as findings with stable codes. Down (check_failed) on any critical
 * finding, degraded on warnings, up otherwise; down with dns_failure when the
 * domain does not exist or its MX query gets no answer at all.
 */
export const mail_posture: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['domain'],
    properties: {
      domain: hostname,
      dkimSelectors: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 63 }, maxItems: 20, default: [] },
      resolver: resolverSchema,
      mtaStsPort: { ...port, description: 'port of https://mta-sts.<domain>/ when not 443 (tests, unusual deployments)' },
    },
  },
  sealedFields: [],
  hasPingUrl: false,

  async check(raw: Partial<MailPostureConfig>, ctx: CheckContext): Promise<CheckResult> {
    const config = { dkimSelectors: [], resolver: null, ...raw } as MailPostureConfig;
    const domain = config.domain.toLowerCase().replace(/\.$/, '');
    const t0 = performance.now();
    const elapsed = () => Math.round(performance.now() - t0);
    const fail = (code: string, message: string): CheckResult => ({
      outcome: 'down', cause: 'dns_failure', message, responseTimeMs: null,
      detail: { findings: [{ code, severity: 'critical', message }], grade: null, readings: [] },
    });
    let r: CheckResolver;
    try {
      r = new CheckResolver(config.resolver, ctx.net, ctx.signal);
    } catch (e) {
      return fail('dns_lookup_failed', (e as Error).message);
    }
    let mx: MxResult;
    try {
      mx = await mxFindings(r, domain);
    } catch (e) {
      // Without an answer for the domain itself the rest would only repeat the failure.
      return fail(dnsErrorKind(e) === 'nxdomain' ? 'domain_not_found' : 'dns_lookup_failed', describeDnsError(e, domain, 'MX'));
    }
    const sections = await Promise.all([
      section('SPF', () => spfFindings(r, domain)),
      section('DMARC', () => dmarcFindings(r, domain)),
      config.dkimSelectors.length === 0
        ? Promise.resolve<Finding[]>([{ code: 'dkim_not_checked', severity: 'info', message: 'no DKIM selectors configured' }])
        : Promise.all(config.dkimSelectors.map((s) => section(`DKIM ${s}`, () => dkimFindings(r, domain, s)))).then((l) => l.flat()),
      section('MTA-STS', () => mtaStsFindings(r, domain, {
        policy: ctx.net, signal: ctx.signal, ownResolver: Boolean(config.resolver), port: config.mtaStsPort ?? 443, mxHosts: mx.hosts,
      })),
      section('TLS-RPT', () => tlsrptFindings(r, domain)),
    ]);
    const findings = [...mx.findings, ...sections.flat()];
    const critical = findings.filter((f) => f.severity === 'critical');
    const warnings = findings.filter((f) => f.severity === 'warning');
    const detail = { findings, grade: null, readings: [] };
    const problems = [...critical, ...warnings];
    const summary = problems.slice(0, 3).map((f) => f.message).join('; ') + (problems.length > 3 ? `; and ${problems.length - 3} more` : '');
    if (critical.length > 0) return { outcome: 'down', cause: 'check_failed', message: summary, responseTimeMs: elapsed(), detail };
    if (warnings.length > 0) return { outcome: 'degraded', cause: 'check_failed', message: summary, responseTimeMs: elapsed(), detail };
    return { outcome: 'up', cause: null, message: `${domain}: MX, SPF, DMARC${config.dkimSelectors.length ? ', DKIM' : ''} in order`, responseTimeMs: elapsed(), detail };
  },
};
