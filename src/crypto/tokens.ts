import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a token; the only form in which checked-only tokens are stored. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Compares two hashes in constant time. */
export function sameHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A new secret token `<kind>_<43 base64url chars>` (256 bits) and its visible prefix. */
export function newToken(kind: string): { token: string; prefix: string } {
  const token = `${kind}_${randomBytes(32).toString('base64url')}`;
  return { token, prefix: token.slice(0, kind.length + 9) };
}

/** The visible prefix of a token made by `newToken`, or null if it has not that shape. */
export function tokenPrefix(token: string): string | null {
  const m = /^([a-z]+)_[A-Za-z0-9_-]{43}$/.exec(token);
  return m ? token.slice(0, m[1].length + 9) : null;
}

/** Whether two secrets given as text are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  return sameHash(hashToken(a), hashToken(b));
}
