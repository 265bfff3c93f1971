import { hostname, type CheckContext, type CheckKind, type CheckResult } from './kind';
import { CheckResolver, describeDnsError, resolverSchema } from '../dns/resolver';
import { answersInclude, queryAnswers, type RecordType } from '../dns/records';

/** A dns monitor's config after defaults. */
interface DnsConfig { name: string; recordType: RecordType; expected: string[]; resolver: string | null }

/** Answers listed in a message before "and N more". */
const LISTED = 10;

function list(values: string[]): string {
  return values.length <= LISTED ? values.join(', ') : `${values.slice(0, LISTED).join(', ')} and ${values.length - LISTED} more`;
}

/**
 * A DNS name resolves (to the expected values, when given). Up when the query
 * answers and every `expected` value is among the answers; down with
 * `dns_failure` when it does not answer (NXDOMAIN, no records of the type,
 * SERVFAIL, timeout, refused) and `assertion_failed` when the answers differ.
 */
export const dns: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: hostname,
      recordType: { enum: ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SRV', 'CAA', 'PTR', 'SOA'], default: 'A' },
      expected: { type: 'array', items: { type: 'string' }, maxItems: 50, default: [] },
      resolver: resolverSchema,
    },
  },
  sealedFields: [],
  hasPingUrl: false,

  async check(raw: Partial<DnsConfig>, ctx: CheckContext): Promise<CheckResult> {
    const config: DnsConfig = { recordType: 'A', expected: [], resolver: null, ...raw } as DnsConfig;
    const name = config.name.replace(/\.$/, '');
    const type = config.recordType;
    let resolver: CheckResolver;
    try {
      resolver = new CheckResolver(config.resolver, ctx.net, ctx.signal);
    } catch (e) {
      return { outcome: 'down', cause: 'dns_failure', message: (e as Error).message, responseTimeMs: null };
    }
    const t0 = performance.now();
    try {
      const answers = await queryAnswers(resolver.raw, name, type);
      // A CNAME leading nowhere answers with no records of the type rather than NODATA: the same failure.
      if (answers.length === 0) throw Object.assign(new Error('no data'), { code: 'ENODATA' });
      const ms = Math.round(performance.now() - t0);
      const shown = list(answers.map((a) => a.text));
      const missing = config.expected.filter((want) => !answersInclude(answers, want));
      if (missing.length > 0) {
        return {
          outcome: 'down', cause: 'assertion_failed', responseTimeMs: ms,
          message: `${type} ${name}: expected ${list(missing)} not among the answers (${shown})`,
        };
      }
      return { outcome: 'up', cause: null, message: `${type} ${name}: ${shown} in ${ms} ms`, responseTimeMs: ms };
    } catch (e) {
      // No answer means no resolution time worth charting (a timeout would only chart the timeout).
      return { outcome: 'down', cause: 'dns_failure', message: describeDnsError(e, name, type), responseTimeMs: null };
    }
  },
};
