import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import type { components } from '../../../gen/openapi';
import { invalid } from '../../pipeline/errors';
import { problemsOf } from '../../pipeline/validate';
import { badInput } from '../../pipeline/text';
import { ApiError } from '../../pipeline/errors';
import type { CheckKind } from './kind';
import { agent } from './agent';
import { dns } from './dns';
import { heartbeat } from './heartbeat';
import { http } from './http';
import { mail_posture } from './mail_posture';
import { snmp } from './snmp';
import { tcp } from './tcp';
import { tls_audit } from './tls_audit';

/** The monitor kinds of the contract. */
export type MonitorKind = components['schemas']['Monitor']['kind'];

/** One entry per kind of the contract: a kind missing here fails `tsc`. */
export const kinds: Record<MonitorKind, CheckKind> = { http, heartbeat, tcp, dns, tls_audit, mail_posture, snmp, agent };

const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false });
const validators = new Map<string, ValidateFunction>();

/**
 * Parses and validates a monitor's `config` string for `kind`, filling defaults.
 * Throws 400 naming the field (`config.url`, `config.assertions.0.operator`).
 */
export function parseConfig(kind: MonitorKind, text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw invalid('config', 'must be a string carrying a JSON document');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw invalid('config', 'must carry a JSON object');
  // Escaped inside the config string, NUL or a lone surrogate would reach check messages and results.
  const bad = badInput(doc);
  if (bad) throw new ApiError(400, 'invalid_config', `Invalid ${kind} config: config.${bad.field} ${bad.reason}.`, { field: `config.${bad.field}`, kind }, [{ field: `config.${bad.field}`, reason: bad.reason }]);
  let validate = validators.get(kind);
  if (!validate) { validate = ajv.compile(kinds[kind].configSchema); validators.set(kind, validate); }
  if (!validate(doc)) {
    const fields = problemsOf(validate.errors, 'config');
    const f = fields[0];
    throw new ApiError(400, 'invalid_config', `Invalid ${kind} config: ${f.field} ${f.reason}.`, { field: f.field, kind }, fields);
  }
  const problem = kinds[kind].checkConfig?.(doc) ?? null;
  if (problem) throw new ApiError(400, 'invalid_config', `Invalid ${kind} config: ${problem.field} ${problem.reason}.`, { field: problem.field, kind }, [problem]);
  return doc as Record<string, unknown>;
}

/** True when `kind` is a kind of the contract. */
export function isKind(kind: string): kind is MonitorKind {
  return Object.hasOwn(kinds, kind);
}
