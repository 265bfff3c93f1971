import { domainToASCII } from 'node:url';
import net from 'node:net';
import { ApiError, invalid } from '../pipeline/errors';
import { LANGUAGES, type Language } from './i18n';

/** Who may see a page: anyone, visitors with the page password, or nobody yet (a draft). */
export const VISIBILITIES = ['public', 'password', 'private'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** Days of history a page may show, and a new page's. */
export const HISTORY_DAYS = { min: 1, max: 365, default: 90 } as const;


/** The language of a page, or 400 naming `language`. */
export function parseLanguage(value: string): Language {
  if ((LANGUAGES as readonly string[]).includes(value)) return value as Language;
  throw invalid('language', `must be one of ${LANGUAGES.join(', ')}`);
}

/** A logo address: http or https, no credentials; null clears it. */
export function parseLogoUrl(value: string | null): string | null {
  if (value === null || value.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid('logoUrl', 'must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('logoUrl', 'must be an http or https URL');
  if (url.username || url.password) throw invalid('logoUrl', 'must not carry a user name or password');
  return url.toString();
}

/**
 * Custom CSS made safe to put inside `<style>`: every `<` becomes the CSS
 * escape `\3C ` (a bare `<` is no valid CSS outside a string, and inside one
 * the escape stands for the same character), so no `</style>` can end the
 * element early; `@import` rules are dropped (the page's CSP refuses other
 * origins anyway). NUL characters go too. Null or empty clears it.
 */
export function sanitizeCss(value: string | null): string | null {
  if (value === null || value.trim() === '') return null;
  return value.replace(/\u0000/g, '').replace(/</g, '\\3C ').replace(/@import\b[^;]*;?/gi, '');
}

/**
 * A custom domain: a host name of at least two labels (IDNs as punycode,
 * lower-cased, no trailing dot), not an IP address; null clears it.
 */
export function parseDomain(value: string | null, baseHost: string | null): string | null {
  if (value === null || value.trim() === '') return null;
  const bad = (why: string) => invalid('customDomain', why);
  const raw = value.trim().replace(/\.$/, '');
  if (/[/:@?#\s]/.test(raw)) throw bad('must be a host name such as status.example.com (no scheme, port or path)');
  if (net.isIP(raw)) throw bad('must be a host name, not an IP address');
  const ascii = domainToASCII(raw.toLowerCase());
  const labels = ascii.split('.');
  if (!ascii || ascii.length > 253 || labels.length < 2 || !labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) || /^\d+$/.test(labels[labels.length - 1])) {
    throw bad('must be a host name such as status.example.com');
  }
  if (baseHost && ascii === baseHost.toLowerCase()) throw bad("must not be Vigil's own host name");
  return ascii;
}

/** Page passwords are stored like people's: a slow hash (src/crypto/passwords.ts). */
export { hashPassword, passwordMatches } from '../crypto/passwords';

/** 400 `password_required`: visibility `password` needs a password. */
export function passwordRequired(): ApiError {
  return new ApiError(400, 'password_required', 'A page with visibility "password" needs a password: send one in the same request or set it first.', {},
    [{ field: 'password', reason: 'required while visibility is password' }]);
}
