/**
 * A local stand-in for Apple's App Store Server API: a test PKI shaped like
 * Apple's (a root, an intermediate marked with OID 1.2.840.113635.100.6.2.1,
 * a signing leaf marked with 1.2.840.113635.100.6.11.1), transactions signed
 * as JWS with the x5c chain, served at GET /inApps/v1/transactions/{id}. The
 * root is written to a file for APP_STORE_ROOT_CERTS; a .p8-style EC key for
 * the client's own API token to APP_STORE_PRIVATE_KEY_FILE.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import { makeCa, makeIntermediate, makeLeaf } from './certs';
import { tempDir } from './child';

const marker = (oid: string) => ({ id: oid, critical: false, value: forge.asn1.toDer(forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.NULL, false, '')).getBytes() });

export interface FakeAppStore {
  url: string;
  /** Files and values for the server's APP_STORE_* settings. */
  env: Record<string, string>;
  /** Makes `transactionId` known, with these transaction fields (signed as Apple would). */
  put(transactionId: string, fields: Record<string, unknown>): void;
  /** The signed transaction served for `transactionId` (to serve it from another fake: a forged one). */
  signed(transactionId: string): string | undefined;
  putSigned(transactionId: string, jws: string): void;
  /** Requests seen (paths and whether they carried a bearer token). */
  requests: { path: string; bearer: boolean }[];
  /** Answers every request with this status instead (e.g. 503), or null. */
  failWith: number | null;
  close(): Promise<void>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export async function startFakeAppStore(bundleId: string, products: string): Promise<FakeAppStore> {
  const root = makeCa({ name: 'Test Apple Root CA' });
  const intermediate = makeIntermediate(root, { name: 'Test Apple WWDR CA', extraExtensions: [marker('1.2.840.113635.100.6.2.1')] });
  const leaf = makeLeaf(intermediate, { names: ['Test Prod ECC Mac App Store and iTunes Store Receipt Signing'], extraExtensions: [marker('1.2.840.113635.100.6.11.1')] });
  const sign = (payload: Record<string, unknown>) => {
    const header = { alg: 'RS256', x5c: [leaf.der, intermediate.der, root.der].map((d) => d.toString('base64')) };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
    return `${input}.${b64url(crypto.sign('sha256', Buffer.from(input), leaf.key))}`;
  };
  const dir = tempDir('vigil-appstore-');
  fs.writeFileSync(path.join(dir, 'root.pem'), root.cert);
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  fs.writeFileSync(path.join(dir, 'key.p8'), ec);
  const transactions = new Map<string, string>();
  const fake: Partial<FakeAppStore> = { requests: [], failWith: null };
  const server = http.createServer((req, res) => {
    fake.requests!.push({ path: req.url ?? '', bearer: /^Bearer \S+/.test(req.headers.authorization ?? '') });
    const m = /^\/inApps\/v1\/transactions\/([^/?]+)/.exec(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    if (fake.failWith) { res.statusCode = fake.failWith; return res.end('{}'); }
    const signed = m ? transactions.get(decodeURIComponent(m[1])) : undefined;
    if (!signed) { res.statusCode = 404; return res.end(JSON.stringify({ errorCode: 4040010, errorMessage: 'Transaction id not found.' })); }
    res.end(JSON.stringify({ signedTransactionInfo: signed }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    env: {
      APP_STORE_BUNDLE_ID: bundleId, APP_STORE_ISSUER_ID: '57246542-96fe-1a63-e053-0824d011072a', APP_STORE_KEY_ID: 'ABCDEFGHIJ',
      APP_STORE_PRIVATE_KEY_FILE: path.join(dir, 'key.p8'), APP_STORE_ROOT_CERTS: path.join(dir, 'root.pem'), APP_STORE_ENVIRONMENT: 'sandbox',
      APP_STORE_API_URL: url, APP_STORE_ONLINE_CHECKS: 'false', APP_STORE_PRODUCTS: products,
    },
    put(transactionId: string, fields: Record<string, unknown>) {
      const now = Date.now();
      transactions.set(transactionId, sign({
        transactionId, originalTransactionId: transactionId, bundleId, environment: 'Sandbox', type: 'Auto-Renewable Subscription',
        purchaseDate: now, originalPurchaseDate: now, signedDate: now, expiresDate: now + 30 * 86_400_000, price: 9990, currency: 'EUR', ...fields,
      }));
    },
    signed: (id: string) => transactions.get(id),
    putSigned: (id: string, jws: string) => { transactions.set(id, jws); },
    close: async () => { await new Promise((r) => server.close(r)); fs.rmSync(dir, { recursive: true, force: true }); },
  }) as FakeAppStore;
}
