import vm from 'node:vm';

/** Longest pattern and subject a `matches` assertion evaluates (bodies are read up to 1 MiB). */
const MAX_PATTERN = 1000;
const MAX_SUBJECT = 1024 * 1024;
/** A pattern that backtracks longer than this fails the assertion instead of stalling the process. */
const TIME_LIMIT_MS = 50;

const context = vm.createContext(Object.create(null));
const script = new vm.Script('pattern.test(subject)');

/**
 * Tests a tenant-supplied regular expression with a time limit: patterns with
 * catastrophic backtracking (`^(a+)+$`) would otherwise freeze the event loop
 * the API shares. Invalid, over-long or timed-out patterns do not match.
 */
export function safeMatch(pattern: string, subject: string): boolean {
  if (pattern.length > MAX_PATTERN) return false;
  let re: RegExp;
  try { re = new RegExp(pattern); } catch { return false; }
  try {
    context.pattern = re;
    context.subject = subject.length > MAX_SUBJECT ? subject.slice(0, MAX_SUBJECT) : subject;
    return script.runInContext(context, { timeout: TIME_LIMIT_MS }) === true;
  } catch {
    return false;
  } finally {
    context.pattern = undefined;
    context.subject = undefined;
  }
}
