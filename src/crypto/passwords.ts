import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { invalid } from '../pipeline/errors';

/**
 * Passwords (people's, and status pages'): stored only as a slow scrypt hash
 * `scrypt$N$r$p$salt$hash`, compared in constant time. Never logged, returned
 * or audited.
 */

/** Password length, in characters. */
export const PASSWORD_LENGTH = { min: 8, max: 128 } as const;

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) => new Promise<Buffer>((resolve, reject) => {
  scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key)));
});

/** scrypt parameters: N 2^15, r 8, p 1 (about 32 MiB and 50–100 ms a guess on this class of machine). */
const SCRYPT = { N: 32768, r: 8, p: 1 } as const;
const MAXMEM = 64 * 1024 * 1024;

/** The stored form of `password`, after its length is checked (400 naming `field`). */
export async function hashPassword(password: string, field = 'password'): Promise<string> {
  const length = [...password].length;
  if (length < PASSWORD_LENGTH.min || length > PASSWORD_LENGTH.max) throw invalid(field, `must be ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters`);
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, { ...SCRYPT, maxmem: MAXMEM });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** True when `password` matches the stored hash (constant-time compare). */
export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash || password.length > PASSWORD_LENGTH.max * 4) return false;
  const expected = Buffer.from(hash, 'base64url');
  const got = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: MAXMEM });
  return got.length === expected.length && timingSafeEqual(got, expected);
}
