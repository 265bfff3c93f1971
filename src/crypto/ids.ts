import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower-case

/** `n` random characters of lower-case Crockford base32 (5 bits each). */
export function randomBase32(n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[bytes[i] & 31];
  return out;
}

/** A new identifier such as `mon_3k9x…`: a type prefix and 20 random characters (100 bits). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase32(20)}`;
}
