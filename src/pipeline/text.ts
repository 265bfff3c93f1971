/**
 * Text PostgreSQL can store: it holds neither NUL nor lone surrogates (not
 * valid UTF-8). Input with them is refused where it enters (the pipeline,
 * monitor configs); text from the outside world that checks bring back (a
 * server's answer, a DNS record) is made storable instead, so that one odd
 * byte never sinks a batch of results.
 */

/** Deeper bodies than this are refused (no operation takes one; a deep one would only exhaust the stack). */
const MAX_DEPTH = 64;
/** Longer lists than this are refused: no operation takes one, and it could only tie up the database. */
const MAX_ITEMS = 10_000;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be stored as text: PostgreSQL holds neither NUL nor lone surrogates (not valid UTF-8). */
export function textProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (a lone surrogate was sent)';
  return null;
}

/** The first string or key in `v` that cannot be stored as text, a nesting too deep or a list too long, without recursion. */
export function badInput(v: unknown): { field: string; reason: string } | null {
  const stack: { v: unknown; at: string; depth: number }[] = [{ v, at: '', depth: 0 }];
  while (stack.length) {
    const { v: x, at, depth } = stack.pop()!;
    if (typeof x === 'string') {
      const reason = textProblem(x);
      if (reason) return { field: at || 'body', reason };
      continue;
    }
    if (!x || typeof x !== 'object' || Buffer.isBuffer(x)) continue;
    if (depth >= MAX_DEPTH) return { field: at || 'body', reason: `nested more than ${MAX_DEPTH} levels deep` };
    if (Array.isArray(x) && x.length > MAX_ITEMS) return { field: at || 'body', reason: `at most ${MAX_ITEMS} items` };
    const entries = Array.isArray(x) ? x.map((y, i) => [String(i), y] as const) : Object.entries(x);
    for (const [k, y] of entries) {
      const field = at ? `${at}.${k}` : k;
      const reason = textProblem(k);
      if (reason) return { field, reason };
      stack.push({ v: y, at: field, depth: depth + 1 });
    }
  }
  return null;
}

const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g');

/** `s` with NUL and lone surrogates replaced by U+FFFD. */
export function storableText(s: string): string {
  return s.replace(UNSTORABLE, '\ufffd'); // replace() starts a global pattern from 0 each time
}

/** A copy of `v` whose strings (keys included) are all storable, `MAX_DEPTH` levels deep at most. */
export function storable<T>(v: T, depth = 0): T {
  if (typeof v === 'string') return storableText(v) as T;
  if (!v || typeof v !== 'object' || depth >= MAX_DEPTH) return v;
  if (Array.isArray(v)) return v.map((x) => storable(x, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[storableText(k)] = storable(x, depth + 1);
  return out as T;
}
