/**
 * Test certificates: a CA, intermediates and leaves (including broken ones:
 * expired, not yet valid, self-signed, wrong name, short keys, weak
 * signatures), all PEM. Keys come from node:crypto (fast, native); node-forge
 * builds and signs the certificates.
 *
 *   const ca = makeCa();
 *   const int = makeIntermediate(ca);
 *   const leaf = makeLeaf(int, { names: ['localhost'] });
 *   tls.createServer({ key: leaf.key, cert: chainPem(leaf, int) });
 *   // trust it: ctx.net.extraCa = [ca.cert]
 */
import crypto from 'node:crypto';
import forge from 'node-forge';

/** A certificate and its private key, both PEM. */
export interface CertKey {
  /** The certificate alone (PEM). Use `chainPem` for a server's chain. */
  cert: string;
  /** The private key (PEM, PKCS#1 RSA). */
  key: string;
  /** The certificate in DER, e.g. to serve at an AIA URL. */
  der: Buffer;
  /** The subject's common name. */
  name: string;
}

/** Options of `makeCa` / `makeIntermediate`. */
export interface CaOptions {
  /** Common name; default "Vigil Test Root CA" / "Vigil Test Intermediate CA". */
  name?: string;
  /** RSA key size; default 2048. */
  keyBits?: number;
  /** Validity in days from `notBefore`; default 3650. */
  days?: number;
  /** Default: one day ago. */
  notBefore?: Date;
  /** More extensions (node-forge form), e.g. a vendor's marker OID. */
  extraExtensions?: object[];
}

/** Options of `makeLeaf`. */
export interface LeafOptions {
  /** DNS names and IP addresses for the subjectAltName; the first is also the common name. */
  names: string[];
  /** Validity in days from `notBefore`; default 90. With `notBefore` in the past, a small value makes an expired certificate. */
  days?: number;
  /** Default: one day ago. A future date makes a certificate not yet valid. */
  notBefore?: Date;
  /** RSA key size; default 2048. OpenSSL generates down to 512. */
  keyBits?: number;
  /** Sign with the leaf's own key, issuer = subject (the `issuer` argument is then ignored and may be null). */
  selfSigned?: boolean;
  /** Adds an Authority Information Access "CA Issuers" URL (where the issuer's certificate can be fetched). */
  aiaUrl?: string;
  /** Signature hash; default sha256. */
  hash?: 'sha256' | 'sha1' | 'md5';
  /** More extensions (node-forge form), e.g. a vendor's marker OID. */
  extraExtensions?: object[];
}

/** A fresh RSA key (PEM). */
function rsaKey(bits: number): string {
  return crypto.generateKeyPairSync('rsa', { modulusLength: bits }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
}

function serial(): string {
  // Positive (leading nibble < 8), 16 bytes, as CAs do.
  return '0' + crypto.randomBytes(16).toString('hex').slice(1);
}

function digest(hash: LeafOptions['hash']) {
  return hash === 'md5' ? forge.md.md5.create() : hash === 'sha1' ? forge.md.sha1.create() : forge.md.sha256.create();
}

interface Draft { name: string; keyBits: number; notBefore: Date; days: number; extensions: object[]; issuer: CertKey | null; hash?: LeafOptions['hash'] }

function build(d: Draft): CertKey {
  const keyPem = rsaKey(d.keyBits);
  const key = forge.pki.privateKeyFromPem(keyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = serial();
  cert.validity.notBefore = d.notBefore;
  cert.validity.notAfter = new Date(d.notBefore.getTime() + d.days * 86_400_000);
  const subject = [{ name: 'commonName', value: d.name }, { name: 'organizationName', value: 'Vigil Tests' }];
  cert.setSubject(subject);
  let signer = key;
  if (d.issuer) {
    const issuerCert = forge.pki.certificateFromPem(d.issuer.cert);
    cert.setIssuer(issuerCert.subject.attributes);
    signer = forge.pki.privateKeyFromPem(d.issuer.key);
  } else {
    cert.setIssuer(subject);
  }
  cert.setExtensions(d.extensions);
  cert.sign(signer, digest(d.hash));
  const pem = forge.pki.certificateToPem(cert);
  const der = Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), 'binary');
  return { cert: pem, key: keyPem, der, name: d.name };
}

const caExtensions = [
  { name: 'basicConstraints', cA: true, critical: true },
  { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
  { name: 'subjectKeyIdentifier' },
];

const dayAgo = () => new Date(Date.now() - 86_400_000);

/** A self-signed root CA. */
export function makeCa(opts: CaOptions = {}): CertKey {
  return build({
    name: opts.name ?? 'Vigil Test Root CA', keyBits: opts.keyBits ?? 2048, notBefore: opts.notBefore ?? dayAgo(),
    days: opts.days ?? 3650, extensions: caExtensions, issuer: null,
  });
}

/** An intermediate CA issued by `issuer`. */
export function makeIntermediate(issuer: CertKey, opts: CaOptions = {}): CertKey {
  return build({
    name: opts.name ?? 'Vigil Test Intermediate CA', keyBits: opts.keyBits ?? 2048, notBefore: opts.notBefore ?? dayAgo(),
    days: opts.days ?? 1825, extensions: [...caExtensions, ...(opts.extraExtensions ?? [])], issuer,
  });
}

/** DER of an AuthorityInfoAccess value with one caIssuers URI. */
function aiaExtension(url: string) {
  const { asn1 } = forge;
  const access = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer('1.3.6.1.5.5.7.48.2').getBytes()),
      asn1.create(asn1.Class.CONTEXT_SPECIFIC, 6, false, url),
    ]),
  ]);
  return { id: '1.3.6.1.5.5.7.1.1', critical: false, value: asn1.toDer(access).getBytes() };
}

/** A server (leaf) certificate for `opts.names`, issued by `issuer` (or self-signed). */
export function makeLeaf(issuer: CertKey | null, opts: LeafOptions): CertKey {
  if (!opts.selfSigned && !issuer) throw new Error('makeLeaf: an issuer is required unless selfSigned');
  const altNames = opts.names.map((n) => (/^[\d.]+$|:/.test(n) ? { type: 7, ip: n } : { type: 2, value: n }));
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
  ];
  if (opts.aiaUrl) extensions.push(aiaExtension(opts.aiaUrl));
  extensions.push(...(opts.extraExtensions ?? []));
  return build({
    name: opts.names[0], keyBits: opts.keyBits ?? 2048, notBefore: opts.notBefore ?? dayAgo(), days: opts.days ?? 90,
    extensions, issuer: opts.selfSigned ? null : issuer, hash: opts.hash,
  });
}

/** The PEM chain a server sends: the leaf first, then each intermediate. */
export function chainPem(...certs: CertKey[]): string {
  return certs.map((c) => c.cert.trim()).join('\n') + '\n';
}

/** A ready PKI: root CA, intermediate, and a `leaf(names)` helper issued by the intermediate. */
export function makePki(): { ca: CertKey; intermediate: CertKey; leaf(opts: LeafOptions): CertKey } {
  const ca = makeCa();
  const intermediate = makeIntermediate(ca);
  return { ca, intermediate, leaf: (opts) => makeLeaf(intermediate, opts) };
}
