/**
 * Plausible's Events API payload, parsed and validated as Plausible does
 * (docs/analytics.md, reference B1): names, the page URL (hostname, pathname
 * URL-decoded, the fragment kept with `h:1`, utm_* from its query), the
 * referrer (its source host; a self-referral is none), props, `i`, and the
 * engagement event. Pure: no I/O, no clock.
 *
 * Every string that reaches storage has NUL removed (PostgreSQL text and
 * jsonb cannot hold it) and lone surrogates replaced by U+FFFD (what UTF-8
 * makes of them anyway; the buffer's batch travels as JSON, whose escape of
 * one PostgreSQL refuses), and is bounded by the URL's 2,000 bytes or the prop
 * limits, so no payload can make the buffer's INSERT fail for its batch.
 */

/** Plausible's limits. */
export const LIMITS = {
  url: 2000,
  referrer: 2000,
  name: 120,
  props: 30,
  propKeyBytes: 300,
  propValueBytes: 2000,
  /** Sites one event names (`d` as a comma list) beyond which the rest are ignored (Vigil's bound, not Plausible's). */
  domains: 20,
} as const;

/** A refusal with Plausible's shape: `400 {"errors":{field:[message]}}`. */
export class EventError extends Error {
  constructor(readonly field: string, message: string) { super(message); }
  /** The response body. */
  body(): { errors: Record<string, string[]> } { return { errors: { [this.field]: [this.message] } }; }
}

/** An event as the request describes it, before the site, the visitor and the user agent are known. */
export interface ParsedEvent {
  name: string;
  /** The domains (or public ids) `d` names, sanitised, at most LIMITS.domains. */
  domains: string[];
  hostname: string;
  pathname: string;
  /** The referrer as host + path (no scheme, query or fragment), or null. */
  referrer: string | null;
  /** The referrer's host without `www.`, or null (none, unparseable, localhost or the page's own host). */
  referrerSource: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  /** At most LIMITS.props string values; null when none. */
  props: Record<string, string> | null;
  interactive: boolean;
  /** `n: "engagement"` (scroll depth / engaged time): validated, then not counted (docs/analytics.md). */
  engagement: boolean;
}

const NUL = /\u0000/g;
/** String.prototype.isWellFormed / toWellFormed (Node 20; ES2024, newer than the compile target's lib). */
type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };
/** Removes what PostgreSQL text cannot hold, and makes lone surrogates U+FFFD. */
const clean = (s: string): string => {
  const t = s.includes('\u0000') ? s.replace(NUL, '') : s;
  return (t as unknown as WellFormed).isWellFormed() ? t : (t as unknown as WellFormed).toWellFormed();
};

/** `www.` and surrounding space removed, lower case (as Plausible's sanitize_hostname, and URL hosts are). */
export function sanitizeHostname(host: string): string {
  const h = host.trim().toLowerCase();
  return h.startsWith('www.') ? h.slice(4) : h;
}

/** Percent-decoding as far as it goes: a malformed sequence is kept as sent. */
function decode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => { try { return decodeURIComponent(run); } catch { return run; } });
  }
}

/** Truncates to at most `max` UTF-16 units without splitting a surrogate pair. */
function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** The JSON object of a body; anything else is Plausible's `request` error. */
export function parseBody(body: Buffer | string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    v = null;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new EventError('request', 'Unable to parse request body as json');
  return v as Record<string, unknown>;
}

const first = (b: Record<string, unknown>, ...keys: string[]): unknown => {
  for (const k of keys) if (b[k] !== undefined && b[k] !== null && b[k] !== false) return b[k];
  // `false` only matters for `i`; elsewhere it is as good as absent (Plausible's `||`).
  return undefined;
};

function pageUrl(raw: unknown): URL {
  if (raw === undefined) throw new EventError('url', 'is required');
  if (typeof raw !== 'string' || Buffer.byteLength(raw) > LIMITS.url) throw new EventError('url', 'must be a valid url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Plausible's URI.parse takes relative references too (a path only: hostname "(none)").
    try { url = new URL(raw, 'relative:/'); } catch { throw new EventError('url', 'must be a valid url'); }
  }
  if (url.protocol === 'data:') throw new EventError('url', 'scheme is not allowed');
  return url;
}

function eventName(raw: unknown): string {
  let name: string;
  // The separator of `prop` roll-up values may not appear in a name either.
  if (typeof raw === 'string') name = clean(raw).replace(/\u001f/g, '');
  else if (typeof raw === 'number' && Number.isInteger(raw)) name = String(raw);
  else if (raw === undefined) throw new EventError('event_name', "can't be blank");
  else throw new EventError('event_name', 'is invalid');
  if (name.trim() === '') throw new EventError('event_name', "can't be blank");
  if ([...name].length > LIMITS.name) throw new EventError('event_name', `should be at most ${LIMITS.name} character(s)`);
  return name;
}

/** Props: an object or a JSON string of one; lists, maps, null and blank values dropped; the first 30 kept; over-long keys or values refused. */
export function parseProps(raw: unknown): Record<string, string> | null {
  let obj: unknown = raw;
  if (typeof raw === 'string') {
    try { obj = JSON.parse(raw); } catch { return null; }
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return null;
  // No prototype: a key such as `__proto__` is a prop like any other.
  const out: Record<string, string> = Object.create(null);
  let n = 0;
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
    if (n >= LIMITS.props) break;
    if (v === null || v === undefined || typeof v === 'object') continue;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
    // The separator of `prop` roll-up values may not appear in a key (docs/analytics.md).
    const key = clean(k).replace(/\u001f/g, '');
    const value = clean(String(v));
    if (key.trim() === '' || value.trim() === '') continue;
    if (Buffer.byteLength(key) > LIMITS.propKeyBytes || Buffer.byteLength(value) > LIMITS.propValueBytes) {
      throw new EventError('props', `keys should have at most ${LIMITS.propKeyBytes} bytes and values ${LIMITS.propValueBytes} bytes`);
    }
    if (!(key in out)) n++;
    out[key] = value;
  }
  return n > 0 ? out : null;
}

/** The referrer as stored (host + path) and its source host; a referrer from the page's own host or localhost has no source. */
function referrerOf(raw: unknown, pageHost: string): { referrer: string | null; source: string | null } {
  if (typeof raw !== 'string' || raw.trim() === '') return { referrer: null, source: null };
  let url: URL;
  try { url = new URL(truncate(raw, LIMITS.referrer)); } catch { return { referrer: null, source: null }; }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'android-app:') return { referrer: null, source: null };
  const host = sanitizeHostname(url.hostname);
  if (!host || host === 'localhost' || host === pageHost) return { referrer: null, source: null };
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return { referrer: clean(truncate(host + decode(path), LIMITS.referrer)), source: clean(host) };
}

function engagementValid(b: Record<string, unknown>): boolean {
  const int = (v: unknown) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v);
  const sd = int(b.sd);
  const e = int(b.e);
  const sdOk = typeof sd === 'number' && Number.isInteger(sd) && sd >= 0;
  const eOk = typeof e === 'number' && Number.isInteger(e) && e > 0 && e < 30 * 24 * 3600_000;
  return sdOk || eOk;
}

const utm = (url: URL, key: string): string | null => {
  const v = url.searchParams.get(key);
  return v && v.trim() !== '' ? clean(v) : null;
};

/** Validates a decoded body into an event (throws EventError with Plausible's field and message). */
export function parseEvent(b: Record<string, unknown>): ParsedEvent {
  const url = pageUrl(first(b, 'u', 'url'));
  const hostname = url.protocol === 'relative:' || !url.hostname ? '(none)' : clean(sanitizeHostname(url.hostname));
  const name = eventName(first(b, 'n', 'name'));

  const h = first(b, 'h', 'hashMode');
  if (h !== undefined && h !== true && !(typeof h === 'number' && Number.isInteger(h)) && !(typeof h === 'string' && /^\d+$/.test(h))) {
    throw new EventError('hash_mode', 'is invalid');
  }
  let pathname = decode(url.pathname || '/').trimEnd() || '/';
  if ((h === 1 || h === '1' || h === true) && url.hash.length > 1) pathname += `#${decode(url.hash.slice(1))}`;
  pathname = clean(pathname);

  const props = parseProps(first(b, 'm', 'meta', 'p', 'props'));
  const engagement = name === 'engagement';
  if (engagement && !engagementValid(b)) {
    throw new EventError('event_name', "engagement event requires a valid integer value for at least one of 'sd' or 'e' fields");
  }

  const rawDomain = first(b, 'd', 'domain');
  let domains: string[];
  if (typeof rawDomain === 'string') {
    if (rawDomain.trim() === '') throw new EventError('domain', "can't be blank");
    domains = [...new Set(rawDomain.split(',').map((d) => clean(d.trim())).filter(Boolean))].slice(0, LIMITS.domains);
  } else {
    domains = hostname === '(none)' ? [] : [hostname];
  }
  if (domains.length === 0) throw new EventError('domain', "can't be blank");

  const ref = referrerOf(first(b, 'r', 'referrer'), hostname);
  const i = b.i ?? b.interactive;
  return {
    name,
    domains,
    hostname,
    pathname,
    referrer: ref.referrer,
    referrerSource: ref.source,
    utmSource: utm(url, 'utm_source'),
    utmMedium: utm(url, 'utm_medium'),
    utmCampaign: utm(url, 'utm_campaign'),
    props,
    interactive: i !== false,
    engagement,
  };
}
