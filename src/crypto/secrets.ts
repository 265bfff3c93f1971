import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Encrypts and decrypts secrets that must be read back, under one master key. */
export interface SecretBox {
  seal(plain: string): string;
  /** The plain text, or null when it cannot be decrypted (wrong key, damaged). */
  open(sealed: string): string | null;
  /** A MAC of `data` for one `purpose` (a key of its own per purpose, derived from the master key), base64url. */
  sign(purpose: string, data: string): string;
  /** True when `mac` is `sign(purpose, data)` (constant-time). */
  verify(purpose: string, data: string, mac: string): boolean;
}

/** AES-256-GCM; the sealed form is `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the master key must be 32 bytes');
  const macKeys = new Map<string, Buffer>();
  const sign = (purpose: string, data: string) => {
    let k = macKeys.get(purpose);
    if (!k) macKeys.set(purpose, k = createHmac('sha256', key).update(`vigil-mac:${purpose}`).digest());
    return createHmac('sha256', k).update(data, 'utf8').digest('base64url');
  };
  return {
    sign,
    verify(purpose, data, mac) {
      const want = Buffer.from(sign(purpose, data));
      const got = Buffer.from(mac);
      return got.length === want.length && timingSafeEqual(got, want);
    },
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed) {
      const [v, iv, tag, body] = sealed.split('.');
      if (v !== 'v1' || !iv || !tag || body === undefined) return null;
      try {
        const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        d.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}

/**
 * The master key: `MASTER_KEY` (base64 of 32 bytes) when given, else the key
 * stored in `<dataDir>/master.key`, generated there (mode 600) on first use.
 */
export function loadMasterKey(configured: string | null, dataDir: string): Buffer {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32) throw new Error('MASTER_KEY must be the base64 encoding of 32 bytes');
    return key;
  }
  const file = path.join(dataDir, 'master.key');
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  fs.mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  fs.writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600 });
  return key;
}
