/**
 * What an issue's `lastEvent` shows of the SDK's `contexts` and `request`
 * (Sentry's event interfaces), without the credentials they may carry: an
 * SDK sends the request's cookies, its `Authorization` header and a query
 * string with a token as readily as the URL, and whoever reads the issue
 * (any `monitor:read` key, the MCP tools) must not get them.
 *
 * - Headers whose name says they carry a secret (`Cookie`, `Set-Cookie`,
 *   `Authorization`, `Proxy-Authorization`, `X-Api-Key`, anything naming a
 *   token, secret, password, session, signature, credential, CSRF token) are
 *   left out, and so is any header whose value is a bearer or basic
 *   credential.
 * - Query parameters named like a credential (those words, plus `key`,
 *   `code`, `sig`, `jwt`) are left out, of `queryString` and of `url`; the
 *   URL loses its user name and password and its fragment (where OAuth puts
 *   tokens).
 * - The request's `cookies`, `data` (the body) and `env` are never shown.
 * - In `contexts`, keys named like a credential are left out at any depth.
 */

/** A name that says its value is a credential. */
const SECRET_NAME = /auth|token|secret|passw|pwd|session|cookie|api[-_]?key|apikey|signature|credential|private[-_]?key|csrf|xsrf|jwt|bearer/i;
/** Short query parameter names that carry credentials by convention. */
const SECRET_PARAM = /^(key|code|sig|pass|access_key)$/i;
/** A header value that is a credential whatever the header's name. */
const CREDENTIAL_VALUE = /^\s*(bearer|basic|digest|negotiate|token)\s+\S/i;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The request as `lastEvent.request` shows it. */
export interface EventRequest { url: string | null; method: string | null; queryString: string | null; headers: Record<string, string> }

const text = (v: unknown): string | null => (typeof v === 'string' ? v : v === undefined || v === null ? null : JSON.stringify(v));

/** Pairs from Sentry's two shapes: an object, or a list of `[name, value]`. */
function pairs(v: unknown): [string, unknown][] {
  if (Array.isArray(v)) return v.filter((p): p is unknown[] => Array.isArray(p) && p.length >= 2).map((p) => [String(p[0]), p[1]]);
  if (v && typeof v === 'object') return Object.entries(v);
  return [];
}

/** A query string without its credential-like parameters (null when nothing is left). */
export function cleanQuery(q: unknown): string | null {
  const params = typeof q === 'string' ? [...new URLSearchParams(q.replace(/^\?/, ''))] : pairs(q).map(([k, v]) => [k, text(v) ?? ''] as [string, string]);
  const kept = params.filter(([k]) => !SECRET_NAME.test(k) && !SECRET_PARAM.test(k));
  return kept.length ? new URLSearchParams(kept).toString() : null;
}

/** A URL without user name, password, fragment and credential-like query parameters. */
export function cleanUrl(raw: string): string {
  const noFragment = raw.split('#')[0];
  const [base, query] = [noFragment.split('?')[0], noFragment.includes('?') ? noFragment.slice(noFragment.indexOf('?') + 1) : null];
  let out = base;
  try {
    const u = new URL(base);
    u.username = '';
    u.password = '';
    out = u.toString();
  } catch {
    out = base.replace(/^([a-z][\w+.-]*:\/\/)[^/@]*@/i, '$1'); // not absolute, or not parseable: still no userinfo
  }
  const q = query === null ? null : cleanQuery(query);
  return q ? `${out}?${q}` : out;
}

/** The event's request, credentials removed; null when the SDK sent none. */
export function requestOf(raw: unknown): EventRequest | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const headers: Record<string, string> = {};
  for (const [name, value] of pairs(r.headers)) {
    const v = text(value);
    if (v === null || SECRET_NAME.test(name) || CREDENTIAL_VALUE.test(v)) continue;
    headers[name] = v;
  }
  return {
    url: typeof r.url === 'string' ? cleanUrl(r.url) : null,
    method: typeof r.method === 'string' ? r.method : null,
    queryString: cleanQuery(r.query_string),
    headers,
  };
}

/** `v` without keys named like a credential, at any depth. */
function withoutSecrets(v: unknown, depth = 0): Json {
  if (depth > 16) return null;
  if (Array.isArray(v)) return v.map((x) => withoutSecrets(x, depth + 1));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([k]) => !SECRET_NAME.test(k)).map(([k, x]) => [k, withoutSecrets(x, depth + 1)]));
  }
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : null;
}

/** The event's contexts (os, browser, runtime, device, trace, the app's own), credential-named keys removed; null when none. */
export function contextsOf(raw: unknown): Record<string, Json> | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const out = withoutSecrets(raw) as Record<string, Json>;
  return Object.keys(out).length ? out : null;
}
