import type { IncomingHttpHeaders } from 'node:http';
import { JSONPath } from 'jsonpath-plus';
import { evaluate, type Operator } from '../assert';

/** One assertion of an http monitor's config. */
export interface HttpAssertion { type: string; operator: Operator; value: string; property?: string }

/** What the final response showed, as the assertions see it. */
export interface Observed {
  statusCode: number;
  responseTimeMs: number;
  body: string;
  headers: IncomingHttpHeaders;
  /** Whole days until the leaf certificate's notAfter; null over plain http. */
  tlsDaysRemaining: number | null;
}

/** The verdict on one assertion. `soft` failures (response time) degrade rather than take the monitor down. */
export interface Verdict { passed: boolean; soft: boolean; message: string }

/** Assertion types whose failure is soft: the target answered correctly, only slowly. */
const SOFT = new Set(['response_time_ms']);

function headerValue(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name.toLowerCase()];
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(', ') : String(v);
}

/** First match of a JSONPath expression, as text (strings as is, anything else as JSON); null when none. */
export function jsonPathValue(parsed: unknown, path: string): string | null {
  let matches: unknown[];
  try {
    // `safe` evaluates filter expressions with jsonpath-plus's own interpreter, never eval(): the path is tenant input.
    matches = JSONPath({ path, json: parsed as object, wrap: true, eval: 'safe' }) as unknown[];
  } catch {
    return null;
  }
  if (!Array.isArray(matches) || matches.length === 0 || matches[0] === undefined) return null;
  const first = matches[0];
  return typeof first === 'string' ? first : JSON.stringify(first);
}

/** Evaluates every assertion against the observed response, in config order. */
export function runAssertions(assertions: readonly HttpAssertion[], seen: Observed): Verdict[] {
  let parsed: { ok: boolean; value: unknown } | undefined;
  const json = () => {
    if (!parsed) {
      try { parsed = { ok: true, value: JSON.parse(seen.body) }; } catch { parsed = { ok: false, value: undefined }; }
    }
    return parsed;
  };
  return assertions.map((a) => {
    const soft = SOFT.has(a.type);
    const verdict = (label: string, actual: string | number | null) => ({ ...evaluate(label, a.operator, actual, a.value), soft });
    switch (a.type) {
      case 'status_code': return verdict('status_code', seen.statusCode);
      case 'response_time_ms': return verdict('response_time_ms', seen.responseTimeMs);
      case 'body': return verdict('body', seen.body);
      case 'tls_days_remaining': return verdict('tls_days_remaining', seen.tlsDaysRemaining);
      case 'header':
        if (!a.property) return { passed: false, soft, message: 'header assertion names no header (property)' };
        return verdict(`header ${a.property}`, headerValue(seen.headers, a.property));
      case 'json_path': {
        if (!a.property) return { passed: false, soft, message: 'json_path assertion has no path (property)' };
        const doc = json();
        if (!doc.ok) {
          const v = verdict(`json_path ${a.property}`, null);
          return v.passed ? v : { ...v, message: `json_path ${a.property}: the body is not JSON` };
        }
        return verdict(`json_path ${a.property}`, jsonPathValue(doc.value, a.property));
      }
      default: return { passed: false, soft, message: `unknown assertion type ${a.type}` };
    }
  });
}
