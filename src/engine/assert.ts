import { safeMatch } from './safeRegex';

/** The assertion operators of the contract. */
export type Operator = 'eq' | 'neq' | 'lt' | 'lte' | 'gt' | 'gte' | 'contains' | 'not_contains' | 'matches';

/** The outcome of one assertion, with a message naming what was seen. */
export interface AssertionOutcome { passed: boolean; message: string }

const NUMERIC = new Set<Operator>(['lt', 'lte', 'gt', 'gte']);

/**
 * Compares `actual` with the assertion's `expected` string. Numbers compare as
 * numbers when both sides are numeric (always for lt/lte/gt/gte); `matches`
 * takes a regular expression; an invalid one fails the assertion.
 */
export function compare(operator: Operator, actual: string | number | null | undefined, expected: string): boolean {
  if (actual === null || actual === undefined) return operator === 'neq' || operator === 'not_contains';
  const a = String(actual);
  const an = Number(actual);
  const en = Number(expected);
  const numeric = a.trim() !== '' && expected.trim() !== '' && Number.isFinite(an) && Number.isFinite(en);
  if (NUMERIC.has(operator) && !numeric) return false;
  switch (operator) {
    case 'eq': return numeric ? an === en : a === expected;
    case 'neq': return numeric ? an !== en : a !== expected;
    case 'lt': return an < en;
    case 'lte': return an <= en;
    case 'gt': return an > en;
    case 'gte': return an >= en;
    case 'contains': return a.includes(expected);
    case 'not_contains': return !a.includes(expected);
    case 'matches':
      return safeMatch(expected, a);
  }
}

const WORDS: Record<Operator, string> = {
  eq: '=', neq: '≠', lt: '<', lte: '≤', gt: '>', gte: '≥', contains: 'contains', not_contains: 'does not contain', matches: 'matches',
};

/** Evaluates one assertion and says what it saw: "status_code 503 is not < 400". */
export function evaluate(label: string, operator: Operator, actual: string | number | null | undefined, expected: string): AssertionOutcome {
  const passed = compare(operator, actual, expected);
  const shown = actual === null || actual === undefined ? 'nothing' : typeof actual === 'string' && actual.length > 80 ? `${actual.slice(0, 77)}…` : String(actual);
  return { passed, message: `${label} ${shown} ${passed ? '' : 'is not '}${WORDS[operator]} ${expected}`.replace(/\s+/g, ' ').trim() };
}
