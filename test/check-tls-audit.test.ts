import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { tls_audit } from '../src/engine/kinds/tls_audit';
import type { CheckContext, CheckResult } from '../src/engine/kinds/kind';
import { chainPem, makeCa, makeIntermediate, makeLeaf, type CertKey } from './support/certs';

let ca: CertKey;
let intermediate: CertKey;
const closers: (() => void)[] = [];

const ctx = (over: Partial<CheckContext> = {}): CheckContext => ({
  monitorId: 'm', intervalSeconds: 60, now: new Date(), signal: AbortSignal.timeout(20000),
  net: { allowPrivate: true, extraCa: [ca.cert] }, ...over,
});

interface ServerOptions extends tls.TlsOptions {
  /** Strict-Transport-Security max-age to send; undefined sends none. */
  hsts?: number;
  /** Serve a non-HTTP protocol (an IMAP-like greeting) instead of HTTPS. */
  greeting?: string;
}

/** Starts a TLS server on 127.0.0.1 and returns its port. */
async function serve(opts: ServerOptions): Promise<number> {
  const { hsts, greeting, ...tlsOptions } = opts;
  let server: net.Server;
  if (greeting !== undefined) {
    server = tls.createServer(tlsOptions, (s) => { s.on('error', () => {}); s.write(greeting); });
  } else {
    server = https.createServer(tlsOptions, (req, res) => {
      if (hsts !== undefined) res.setHeader('Strict-Transport-Security', `max-age=${hsts}; includeSubDomains`);
      res.end('ok');
    });
  }
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  closers.push(() => { server.close(); (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.(); });
  return (server.address() as net.AddressInfo).port;
}

const leafFor = (opts: Partial<Parameters<typeof makeLeaf>[1]> = {}) => makeLeaf(intermediate, { names: ['localhost', '127.0.0.1'], ...opts });
const withChain = (leaf: CertKey, extra: tls.TlsOptions = {}): tls.TlsOptions => ({ key: leaf.key, cert: chainPem(leaf, intermediate), ...extra });

async function audit(port: number, config: Record<string, unknown> = {}, over?: Partial<CheckContext>): Promise<CheckResult> {
  return (await tls_audit.check({ host: 'localhost', port, ...config }, ctx(over)))!;
}

const codes = (r: CheckResult) => r.detail!.findings.map((f) => f.code);
const finding = (r: CheckResult, code: string) => r.detail!.findings.find((f) => f.code === code);

let good: CertKey;

beforeAll(() => {
  ca = makeCa();
  intermediate = makeIntermediate(ca);
  good = leafFor();
});
afterAll(() => { for (const close of closers) close(); });

describe('tls_audit: a well-configured server', () => {
  test('is up with grade A and a cert_ok finding; TLS 1.0/1.1 refused, TLS 1.3 offered', async () => {
    const r = await audit(await serve(withChain(good)));
    expect(r).toMatchObject({ outcome: 'up', cause: null, detail: { grade: 'A', readings: [] } });
    expect(codes(r).sort()).toEqual(['cert_ok', 'hsts_missing']);
    expect(r.message).toMatch(/^Grade A: TLS 1\.3/);
    expect(typeof r.responseTimeMs).toBe('number');
  });

  test('with HSTS of a year: A+ (hsts_ok); with a short max-age: A (hsts_short_max_age)', async () => {
    const plus = await audit(await serve({ ...withChain(good), hsts: 31536000 }));
    expect(plus).toMatchObject({ outcome: 'up', detail: { grade: 'A+' } });
    expect(codes(plus)).toContain('hsts_ok');
    const short = await audit(await serve({ ...withChain(good), hsts: 300 }));
    expect(short).toMatchObject({ outcome: 'up', detail: { grade: 'A' } });
    expect(codes(short)).toContain('hsts_short_max_age');
  });

  test('a non-HTTP TLS service (greeting first) is graded without HSTS findings', async () => {
    const r = await audit(await serve({ ...withChain(good), greeting: '* OK IMAP4rev1 ready\r\n' }));
    expect(r).toMatchObject({ outcome: 'up', detail: { grade: 'A' } });
    expect(codes(r)).toEqual(['cert_ok']);
  });

  test('an IP literal host is checked against IP subjectAltNames, without SNI', async () => {
    const r = await audit(await serve(withChain(good)), { host: '127.0.0.1' });
    expect(r).toMatchObject({ outcome: 'up', detail: { grade: 'A' } });
  });

  test('limited to TLS 1.2: still A and up, with the info finding tls13_missing', async () => {
    const r = await audit(await serve(withChain(good, { maxVersion: 'TLSv1.2' })));
    expect(r).toMatchObject({ outcome: 'up', detail: { grade: 'A' } });
    expect(codes(r)).toContain('tls13_missing');
    expect(r.message).toMatch(/TLS 1\.2, ECDHE-RSA-AES128-GCM-SHA256/);
  });
});

describe('tls_audit: certificate problems', () => {
  test('expiring within warnDays: degraded, A- (cert_expiring_soon)', async () => {
    const leaf = leafFor({ days: 6 });
    const r = await audit(await serve(withChain(leaf)), { warnDays: 14 });
    expect(r).toMatchObject({ outcome: 'degraded', cause: 'tls_error', detail: { grade: 'A-' } });
    expect(finding(r, 'cert_expiring_soon')).toMatchObject({ severity: 'warning', message: expect.stringMatching(/expires in 4 days/) });
    expect((await audit(await serve(withChain(leaf)), { warnDays: 3 })).outcome).toBe('up');
  });

  test('expired: down, T (cert_expired)', async () => {
    const leaf = leafFor({ notBefore: new Date(Date.now() - 40 * 86_400_000), days: 30 });
    const r = await audit(await serve(withChain(leaf)));
    expect(r).toMatchObject({ outcome: 'down', cause: 'tls_error', detail: { grade: 'T' } });
    expect(finding(r, 'cert_expired')).toMatchObject({ severity: 'critical' });
    expect(r.message).toMatch(/^Grade T \(A if trusted\): the certificate expired/);
  });

  test('not yet valid: down, T (cert_not_yet_valid)', async () => {
    const r = await audit(await serve(withChain(leafFor({ notBefore: new Date(Date.now() + 2 * 86_400_000) }))));
    expect(r).toMatchObject({ outcome: 'down', detail: { grade: 'T' } });
    expect(codes(r)).toContain('cert_not_yet_valid');
  });

  test('wrong name: down, T (cert_hostname_mismatch)', async () => {
    const r = await audit(await serve(withChain(leafFor({ names: ['other.example'] }))));
    expect(r).toMatchObject({ outcome: 'down', detail: { grade: 'T' } });
    expect(finding(r, 'cert_hostname_mismatch')!.message).toMatch(/localhost.*other\.example/);
  });

  test('self-signed: down, T (cert_self_signed); trusted when the certificate itself is an extra CA', async () => {
    const self = makeLeaf(null, { names: ['localhost'], selfSigned: true });
    const port = await serve({ key: self.key, cert: self.cert });
    const r = await audit(port);
    expect(r).toMatchObject({ outcome: 'down', detail: { grade: 'T' } });
    expect(codes(r)).toContain('cert_self_signed');
    expect(codes(r)).not.toContain('cert_untrusted');
    const pinned = await audit(port, {}, { net: { allowPrivate: true, extraCa: [self.cert] } });
    expect(pinned).toMatchObject({ outcome: 'up', detail: { grade: 'A' } });
  });

  test('issued by an unknown CA: down, T (cert_untrusted)', async () => {
    const otherCa = makeCa({ name: 'Unknown Root' });
    const otherInt = makeIntermediate(otherCa, { name: 'Unknown Intermediate' });
    const leaf = makeLeaf(otherInt, { names: ['localhost'] });
    const r = await audit(await serve({ key: leaf.key, cert: chainPem(leaf, otherInt, otherCa) }));
    expect(r).toMatchObject({ outcome: 'down', detail: { grade: 'T' } });
    expect(finding(r, 'cert_untrusted')!.message).toMatch(/Unknown Root is not a trusted CA/);
    expect(codes(r)).not.toContain('chain_incomplete');
  });

  test('intermediate not sent and not fetchable: chain_incomplete and cert_untrusted, T', async () => {
    const r = await audit(await serve({ key: good.key, cert: good.cert }));
    expect(r).toMatchObject({ outcome: 'down', detail: { grade: 'T' } });
    expect(codes(r)).toEqual(expect.arrayContaining(['chain_incomplete', 'cert_untrusted']));
  });

  test('intermediate not sent but fetchable from the AIA URL: chain_incomplete only, B, degraded', async () => {
    const aia = http.createServer((req, res) => { res.setHeader('content-type', 'application/pkix-cert'); res.end(intermediate.der); });
    await new Promise<void>((resolve) => aia.listen(0, '127.0.0.1', () => resolve()));
    closers.push(() => aia.close());
    const leaf = leafFor({ aiaUrl: `http://127.0.0.1:${(aia.address() as net.AddressInfo).port}/int.der` });
    const r = await audit(await serve({ key: leaf.key, cert: leaf.cert }));
    expect(r).toMatchObject({ outcome: 'degraded', detail: { grade: 'B' } });
    expect(codes(r)).toContain('chain_incomplete');
    expect(codes(r)).not.toContain('cert_untrusted');
  });

  test('SHA-1 signature: down, T (cert_weak_signature)', async () => {
    const leaf = leafFor({ hash: 'sha1' });
    const r = await audit(await serve(withChain(leaf, { ciphers: 'DEFAULT:@SECLEVEL=0' })));
    expect(r).toMatchObject({ outcome: 'down', detail: { grade: 'T' } });
    expect(finding(r, 'cert_weak_signature')!.message).toMatch(/SHA-1/);
  });

  test('1024-bit key: key_too_short warning, B; 512-bit: critical, F, down', async () => {
    const weak = await audit(await serve(withChain(leafFor({ keyBits: 1024 }), { ciphers: 'DEFAULT:@SECLEVEL=0' })));
    expect(weak).toMatchObject({ outcome: 'degraded', detail: { grade: 'B' } });
    expect(finding(weak, 'key_too_short')).toMatchObject({ severity: 'warning' });
    const broken = await audit(await serve(withChain(leafFor({ keyBits: 512 }), { ciphers: 'DEFAULT:@SECLEVEL=0' })));
    expect(broken).toMatchObject({ outcome: 'down', cause: 'tls_error', detail: { grade: 'F' } });
    expect(finding(broken, 'key_too_short')).toMatchObject({ severity: 'critical' });
  });
});

describe('tls_audit: protocols and ciphers', () => {
  test('TLS 1.0 and 1.1 accepted (OpenSSL at security level 0): tls10_accepted, tls11_accepted, B', async () => {
    const r = await audit(await serve(withChain(good, { minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' })));
    expect(r).toMatchObject({ outcome: 'degraded', detail: { grade: 'B' } });
    expect(codes(r)).toEqual(expect.arrayContaining(['tls10_accepted', 'tls11_accepted']));
    expect(codes(r)).not.toContain('tls12_missing');
  });

  test('only TLS 1.0/1.1: tls12_missing, C', async () => {
    const r = await audit(await serve(withChain(good, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' })));
    expect(r).toMatchObject({ outcome: 'degraded', detail: { grade: 'C' } });
    expect(codes(r)).toEqual(expect.arrayContaining(['tls12_missing', 'tls10_accepted', 'tls11_accepted', 'tls13_missing']));
  });

  test('RSA key exchange: no_forward_secrecy, B', async () => {
    const r = await audit(await serve(withChain(good, { maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' })));
    expect(r).toMatchObject({ outcome: 'degraded', detail: { grade: 'B' } });
    expect(codes(r)).toContain('no_forward_secrecy');
    expect(codes(r)).not.toContain('no_aead');
  });

  test('CBC suite: no_aead, B', async () => {
    const r = await audit(await serve(withChain(good, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA256' })));
    expect(r).toMatchObject({ outcome: 'degraded', detail: { grade: 'B' } });
    expect(codes(r)).toContain('no_aead');
    expect(codes(r)).not.toContain('no_forward_secrecy');
  });

  test('NULL encryption negotiated: weak_cipher critical, F, down', async () => {
    const r = await audit(await serve(withChain(good, { maxVersion: 'TLSv1.2', ciphers: 'NULL-SHA256:@SECLEVEL=0' })));
    expect(r).toMatchObject({ outcome: 'down', cause: 'tls_error', detail: { grade: 'F' } });
    expect(finding(r, 'weak_cipher')).toMatchObject({ severity: 'critical' });
  });
});

describe('tls_audit: failures before grading', () => {
  test('connection refused: down, connection_failed, no grade', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const r = await audit(port, { host: '127.0.0.1' });
    expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed', detail: { grade: null } });
    expect(codes(r)).toEqual(['connection_failed']);
  });

  test('not TLS at all: down, tls_error (handshake_failed)', async () => {
    const plain = net.createServer((s) => { s.on('error', () => {}); s.end('220 plain SMTP\r\n'); });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()));
    closers.push(() => plain.close());
    const r = await audit((plain.address() as net.AddressInfo).port);
    expect(r).toMatchObject({ outcome: 'down', cause: 'tls_error', detail: { grade: null } });
    expect(codes(r)).toEqual(['handshake_failed']);
  });

  test('a server that never handshakes: down, timeout when the signal aborts', async () => {
    const silent = net.createServer((s) => { s.on('error', () => {}); });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    closers.push(() => silent.close());
    const r = await audit((silent.address() as net.AddressInfo).port, {}, { signal: AbortSignal.timeout(800) });
    expect(r).toMatchObject({ outcome: 'down', cause: 'timeout' });
  });

  test('a private target is refused when the policy forbids private addresses', async () => {
    const r = await audit(443, { host: '127.0.0.1' }, { net: { allowPrivate: false, extraCa: [] } });
    expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed' });
    expect(r.message).toMatch(/private address/);
  });
});
