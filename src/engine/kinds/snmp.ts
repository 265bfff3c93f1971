import { hostname, port, readingAssertionsSchema, type CheckContext, type CheckDetail, type CheckKind, type CheckResult } from './kind';
import { normaliseOid, toReading } from '../snmp/readings';
import { get, type SnmpConfig } from '../snmp/session';
import { isTargetFailure, resolveTarget } from '../snmp/target';
import { verdict } from '../snmp/verdict';

/**
 * SNMP v2c/v3 GET of configured OIDs; readings with units; thresholds as assertions.
 * Outcome `up` when every OID has a value and every assertion passes; `down`
 * otherwise (no `degraded`). Findings in `detail`: `oid_missing`,
 * `unknown_reading`, `threshold_breached`, all critical.
 */
export const snmp: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['host', 'oids'],
    properties: {
      host: hostname,
      port: { ...port, default: 161 },
      version: { enum: ['v2c', 'v3'], default: 'v2c' },
      community: { type: 'string', minLength: 1 },
      username: { type: 'string', minLength: 1 },
      securityLevel: { enum: ['noAuthNoPriv', 'authNoPriv', 'authPriv'] },
      authProtocol: { enum: ['SHA', 'SHA-256', 'SHA-512', 'MD5'], default: 'SHA' },
      authPassword: { type: 'string' },
      privProtocol: { enum: ['AES', 'AES-256', 'DES'], default: 'AES' },
      privPassword: { type: 'string' },
      oids: {
        type: 'array', minItems: 1, maxItems: 50,
        items: {
          type: 'object', additionalProperties: false, required: ['oid'],
          properties: { oid: { type: 'string', pattern: '^\\.?[0-9]+(\\.[0-9]+)+$' }, name: { type: 'string' }, unit: { type: 'string' } },
        },
      },
      assertions: readingAssertionsSchema,
    },
  },
  sealedFields: ['community', 'authPassword', 'privPassword'],
  hasPingUrl: false,
  check: (config: SnmpConfig, ctx: CheckContext) => checkSnmp(config, ctx),
};

/** One GET of every configured OID, in a single PDU, then the readings judged. */
async function checkSnmp(config: SnmpConfig, ctx: CheckContext): Promise<CheckResult> {
  const target = await resolveTarget(config.host, ctx.net, ctx.signal);
  if (isTargetFailure(target)) {
    const cause = target.kind === 'dns' ? 'dns_failure' : target.kind === 'aborted' ? 'timeout' : 'connection_failed';
    return { outcome: 'down', cause, message: target.message, responseTimeMs: null, detail: empty() };
  }
  const result = await get(config, target, config.oids.map((o) => normaliseOid(o.oid)), ctx.signal);
  if (!result.ok) {
    return { outcome: 'down', cause: result.failure.cause, message: result.failure.message, responseTimeMs: result.elapsedMs, detail: empty() };
  }
  const observed = config.oids.map((spec, i) => toReading(spec, result.varbinds[i]));
  return verdict(observed, config.assertions ?? [], result.elapsedMs);
}

/** The detail of a check that read nothing: the previous readings must not look current. */
function empty(): CheckDetail {
  return { findings: [], grade: null, readings: [] };
}
