import { invalid } from '../../pipeline/errors';

/** The longest URL target accepted (browsers and most proxies stop around here too). */
export const MAX_URL_LENGTH = 2048;

/**
 * Validates an http(s) URL target: absolute, http or https, a host, no
 * whitespace, at most MAX_URL_LENGTH characters. Returns the parsed URL; its
 * `href` (normalised) is what gets stored, so what is delivered to is exactly
 * what was validated. Throws 400 with details.field `field` (`target`).
 */
export function parseHttpUrl(target: string, what = 'an http:// or https:// URL', field = 'target'): URL {
  const raw = typeof target === 'string' ? target.trim() : '';
  if (!raw) throw invalid(field, `must be ${what}`);
  if (raw.length > MAX_URL_LENGTH) throw invalid(field, `must be at most ${MAX_URL_LENGTH} characters`);
  if (/\s/.test(raw)) throw invalid(field, 'must not contain whitespace');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(field, `must be ${what}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(field, `must be ${what}`);
  if (!url.hostname) throw invalid(field, 'must name a host');
  if (url.href.length > MAX_URL_LENGTH) throw invalid(field, `must be at most ${MAX_URL_LENGTH} characters`);
  return url;
}

/** scheme://host/… : for chat webhooks the path itself is the credential, so only the host is shown. */
export function hostOnly(url: URL): string {
  return `${url.protocol}//${url.host}/…`;
}

/**
 * scheme://host/path, with userinfo, query and fragment dropped (they are
 * where credentials live) and "…" marking that something was left out.
 */
export function withoutCredentials(url: URL): string {
  const cut = Boolean(url.username || url.password || url.search || url.hash);
  return `${url.protocol}//${url.host}${url.pathname}${cut ? '…' : ''}`;
}

/**
 * The parts of a stored URL that may be credentials (path tokens, query,
 * password), for scrubbing from error texts. Never throws.
 */
export function urlSecrets(target: string): string[] {
  try {
    const u = new URL(target);
    return [u.pathname.length > 1 ? u.pathname : '', u.search.slice(1), u.password];
  } catch {
    return [];
  }
}
