import { evaluate, type Operator } from '../assert';
import type { CheckResult, Finding, Reading } from '../kinds/kind';

/** One threshold of the config: `reading` names an `oids[].name`. */
export interface ReadingAssertion { reading: string; operator: string; value: string }

/** A reading as the check saw it: `error` set when the agent had no value for the OID. */
export interface Observed { reading: Reading; error: string | null }

/**
 * The findings of one successful exchange. Finding codes (stable once shipped):
 * - `oid_missing` (critical): the agent answered noSuchObject, noSuchInstance
 *   or endOfMibView for a configured OID.
 * - `unknown_reading` (critical): an assertion names no configured reading.
 * - `threshold_breached` (critical): an assertion on a reading failed.
 */
export function findingsOf(observed: Observed[], assertions: ReadingAssertion[]): Finding[] {
  const findings: Finding[] = [];
  for (const { reading, error } of observed) {
    if (!error) continue;
    const label = reading.name === reading.oid ? reading.oid : `${reading.oid} (${reading.name})`;
    findings.push({ code: 'oid_missing', severity: 'critical', message: `${label}: the agent has no value (${error})` });
  }
  for (const a of assertions) {
    // An unnamed OID's reading is named by its OID, so that works as a name too.
    const found = observed.find((o) => o.reading.name === a.reading);
    if (!found) {
      findings.push({ code: 'unknown_reading', severity: 'critical', message: `assertion names "${a.reading}", which is not a configured reading` });
      continue;
    }
    // A reading the agent did not supply already has its oid_missing finding;
    // comparing "nothing" with a threshold would only say it again.
    if (found.error) continue;
    const actual = found.reading.value ?? found.reading.text;
    const outcome = evaluate(a.reading, a.operator as Operator, actual, a.value);
    if (!outcome.passed) findings.push({ code: 'threshold_breached', severity: 'critical', message: outcome.message });
  }
  return findings;
}

/** The check result for an exchange that produced readings. */
export function verdict(observed: Observed[], assertions: ReadingAssertion[], elapsedMs: number): CheckResult {
  const readings = observed.map((o) => o.reading);
  const findings = findingsOf(observed, assertions);
  const detail = { findings, grade: null, readings };
  const critical = findings.filter((f) => f.severity === 'critical');
  if (critical.length === 0) {
    const n = readings.length;
    return { outcome: 'up', cause: null, message: `${n} reading${n === 1 ? '' : 's'} in ${elapsedMs} ms`, responseTimeMs: elapsedMs, detail };
  }
  // A breached threshold is what the monitor exists to catch: it names the
  // cause (and leads the message) even beside missing OIDs.
  const breached = critical.filter((f) => f.code === 'threshold_breached');
  const lead = breached[0] ?? critical[0];
  const more = critical.length - 1;
  return {
    outcome: 'down',
    cause: breached.length > 0 ? 'assertion_failed' : 'check_failed',
    message: more > 0 ? `${lead.message} (and ${more} more)` : lead.message,
    responseTimeMs: elapsedMs,
    detail,
  };
}
