/**
 * The http check kind against real local HTTP and HTTPS servers: every
 * assertion type and operator, redirects, timeouts, network and TLS failures,
 * timing phases and the private-address policy (redirects included).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import zlib from 'node:zlib';
import forge from 'node-forge';
import { http as kind } from '../src/engine/kinds/http';
import type { CheckContext } from '../src/engine/kinds/kind';
import { isPrivateAddress, type NetPolicy } from '../src/net/policy';

/** A CA and a leaf for localhost/127.0.0.1 valid 30 days and an hour from now. */
function makePki() {
  const pair = () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', {
      modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    return { key: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey, pub: forge.pki.publicKeyFromPem(publicKey), pem: privateKey };
  };
  const now = Date.now();
  const issue = (subject: forge.pki.CertificateField[], pub: forge.pki.PublicKey, signer: forge.pki.rsa.PrivateKey, serial: string, days: number, exts: any[]) => {
    const cert = forge.pki.createCertificate();
    cert.publicKey = pub;
    cert.serialNumber = serial;
    cert.validity.notBefore = new Date(now - 86_400_000);
    cert.validity.notAfter = new Date(now + days * 86_400_000 + 3_600_000);
    cert.setSubject(subject);
    cert.setIssuer([{ name: 'commonName', value: 'Vigil Test CA' }]);
    cert.setExtensions(exts);
    cert.sign(signer, forge.md.sha256.create());
    return forge.pki.certificateToPem(cert);
  };
  const ca = pair();
  const leaf = pair();
  const caPem = issue([{ name: 'commonName', value: 'Vigil Test CA' }], ca.pub, ca.key, '01', 365, [
    { name: 'basicConstraints', cA: true, critical: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  const certPem = issue([{ name: 'commonName', value: 'localhost' }], leaf.pub, ca.key, '02', 30, [
    { name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true }, { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
  ]);
  return { caPem, certPem, keyPem: leaf.pem };
}

let received: { method: string; headers: http.IncomingHttpHeaders; body: string } | null = null;
let onFlip: (() => void) | null = null;

function handler(req: http.IncomingMessage, res: http.ServerResponse) {
  const u = new URL(req.url!, 'http://local');
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const q = (k: string) => u.searchParams.get(k);
    switch (u.pathname) {
      case '/ok': res.writeHead(200, { 'Content-Type': 'application/json', 'X-Test': 'Hello' });
        return res.end(JSON.stringify({ status: 'ok', count: 3, items: [{ ok: true, name: 'a' }] }));
      case '/text': res.writeHead(200, { 'Content-Type': 'text/plain' }); return res.end('hello world');
      case '/status': res.writeHead(Number(q('code'))); return res.end('status');
      case '/slow': setTimeout(() => res.end('slow'), Number(q('ms'))); return;
      case '/hang': return; // never answers
      case '/redirect': res.writeHead(Number(q('code') ?? 302), { Location: q('to') ?? '/ok' }); return res.end();
      case '/chain': { const n = Number(q('n'));
        if (n > 0) { res.writeHead(302, { Location: `/chain?n=${n - 1}` }); return res.end(); }
        return res.end('end of chain'); }
      case '/flip': onFlip?.(); res.writeHead(302, { Location: q('to')! }); return res.end();
      case '/echo': received = { method: req.method!, headers: req.headers, body };
        res.writeHead(200, { 'Content-Type': 'application/json' }); return res.end(JSON.stringify(received));
      case '/big': return res.end('a'.repeat(2 * 1024 * 1024) + 'END');
      case '/gzip': res.writeHead(200, { 'Content-Encoding': 'gzip' }); return res.end(zlib.gzipSync('compressed hello'));
      default: res.writeHead(404); return res.end('not found');
    }
  });
}

const servers: net.Server[] = [];
async function listen(server: net.Server, host = '127.0.0.1'): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

let pki: ReturnType<typeof makePki>;
let httpPort: number;
let httpsPort: number;
let H: string; // http://127.0.0.1:port
let S: string; // https://localhost:port
const publicIp = Object.values(os.networkInterfaces()).flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal && !isPrivateAddress(i.address))?.address;
let publicPort = 0;

beforeAll(async () => {
  pki = makePki();
  httpPort = await listen(http.createServer(handler));
  httpsPort = await listen(https.createServer({ key: pki.keyPem, cert: pki.certPem }, handler));
  if (publicIp) publicPort = await listen(http.createServer(handler), publicIp);
  H = `http://127.0.0.1:${httpPort}`;
  S = `https://localhost:${httpsPort}`;
});
afterAll(async () => {
  for (const s of servers) { (s as http.Server).closeAllConnections?.(); await new Promise((r) => s.close(r)); }
});

function ctx(net: Partial<NetPolicy> = {}, signal = AbortSignal.timeout(15000)): CheckContext {
  return { monitorId: 'm', intervalSeconds: 60, now: new Date(), signal, net: { allowPrivate: true, extraCa: [pki.caPem], ...net } };
}
const check = (config: Record<string, unknown>, c = ctx()) => kind.check(config, c).then((r) => r!);
const a = (type: string, operator: string, value: string, property?: string) => ({ type, operator, value, ...(property ? { property } : {}) });

describe('without assertions', () => {
  it('passes a 2xx with a one-line summary, total time and phases', async () => {
    const r = await check({ url: `${H}/ok` });
    expect(r).toMatchObject({ outcome: 'up', cause: null, message: expect.stringMatching(/^HTTP 200 in \d+ ms$/) });
    expect(r.responseTimeMs).toEqual(expect.any(Number));
    expect(r.phases).toMatchObject({ dnsMs: null, tlsMs: null }); // a literal address needs no lookup
  });
  it('fails a 5xx as assertion_failed', async () => {
    const r = await check({ url: `${H}/status?code=503` });
    expect(r).toMatchObject({ outcome: 'down', cause: 'assertion_failed', message: expect.stringMatching(/^HTTP 503 in \d+ ms, expected 2xx$/) });
  });
});

describe('assertions', () => {
  const cases: Array<[string, ReturnType<typeof a>, boolean]> = [
    ['/ok', a('status_code', 'eq', '200'), true],
    ['/status?code=503', a('status_code', 'lt', '400'), false],
    ['/status?code=503', a('status_code', 'gte', '500'), true],
    ['/ok', a('response_time_ms', 'lt', '10000'), true],
    ['/ok', a('body', 'contains', '"status":"ok"'), true],
    ['/ok', a('body', 'contains', 'nope'), false],
    ['/ok', a('body', 'not_contains', 'error'), true],
    ['/ok', a('body', 'not_contains', 'status'), false],
    ['/ok', a('body', 'matches', '"count":\\s*3'), true],
    ['/ok', a('body', 'matches', '^\\['), false],
    ['/ok', a('header', 'eq', 'Hello', 'x-TEST'), true],
    ['/ok', a('header', 'neq', 'Hello', 'X-Test'), false],
    ['/ok', a('header', 'contains', 'json', 'content-type'), true],
    ['/ok', a('header', 'eq', 'x', 'X-Missing'), false],
    ['/ok', a('json_path', 'eq', 'ok', '$.status'), true],
    ['/ok', a('json_path', 'eq', 'true', '$.items[0].ok'), true],
    ['/ok', a('json_path', 'gt', '2', '$.count'), true],
    ['/ok', a('json_path', 'lte', '2', '$.count'), false],
    ['/ok', a('json_path', 'eq', 'x', '$.missing'), false],
    ['/text', a('json_path', 'eq', 'ok', '$.status'), false],
  ];
  it.each(cases)('%s %j passes: %s', async (path, assertion, passes) => {
    const r = await check({ url: `${H}${path}`, assertions: [assertion] });
    expect(r.outcome).toBe(passes ? 'up' : 'down');
    expect(r.cause).toBe(passes ? null : 'assertion_failed');
  });

  it('names what it saw when an assertion fails', async () => {
    const r = await check({ url: `${H}/status?code=503`, assertions: [a('status_code', 'lt', '400'), a('body', 'eq', 'x')] });
    expect(r.message).toBe('status_code 503 is not < 400 (and 1 more assertion failed)');
    expect((await check({ url: `${H}/text`, assertions: [a('json_path', 'eq', 'ok', '$.status')] })).message).toBe('json_path $.status: the body is not JSON');
  });

  it('with assertions, they alone decide (a 404 can be what is expected)', async () => {
    expect((await check({ url: `${H}/nowhere`, assertions: [a('status_code', 'eq', '404')] })).outcome).toBe('up');
  });

  it('a slow response only degrades; with another failure it is down', async () => {
    const slow = await check({ url: `${H}/slow?ms=300`, assertions: [a('status_code', 'eq', '200'), a('response_time_ms', 'lt', '100')] });
    expect(slow).toMatchObject({ outcome: 'degraded', cause: 'assertion_failed', message: expect.stringMatching(/^response_time_ms \d+ is not < 100$/) });
    expect(slow.responseTimeMs).toBeGreaterThanOrEqual(290);
    const both = await check({ url: `${H}/slow?ms=300`, assertions: [a('response_time_ms', 'lt', '100'), a('status_code', 'eq', '201')] });
    expect(both).toMatchObject({ outcome: 'down', cause: 'assertion_failed', message: 'status_code 200 is not = 201 (and 1 more assertion failed)' });
  });

  it('tls_days_remaining counts days to the leaf notAfter over https, null over http', async () => {
    expect((await check({ url: `${S}/ok`, assertions: [a('tls_days_remaining', 'eq', '30')] })).outcome).toBe('up');
    const soon = await check({ url: `${S}/ok`, assertions: [a('tls_days_remaining', 'gt', '60')] });
    expect(soon).toMatchObject({ outcome: 'down', message: 'tls_days_remaining 30 is not > 60' });
    const plain = await check({ url: `${H}/ok`, assertions: [a('tls_days_remaining', 'gte', '0')] });
    expect(plain).toMatchObject({ outcome: 'down', message: 'tls_days_remaining nothing is not ≥ 0' });
  });

  it('reads at most 1 MiB of body and unzips a gzip body', async () => {
    expect((await check({ url: `${H}/big`, assertions: [a('body', 'not_contains', 'END')] })).outcome).toBe('up');
    const gz = await check({ url: `${H}/gzip`, headers: { 'Accept-Encoding': 'gzip' }, assertions: [a('body', 'eq', 'compressed hello')] });
    expect(gz.outcome).toBe('up');
  });
});

describe('redirects', () => {
  it('follows relative and absolute Locations, up to 10 hops', async () => {
    expect(await check({ url: `${H}/redirect`, assertions: [a('body', 'contains', 'ok')] })).toMatchObject({ outcome: 'up', message: expect.stringMatching(/^HTTP 200/) });
    const toHttps = await check({ url: `${H}/redirect?code=301&to=${encodeURIComponent(`${S}/ok`)}`, assertions: [a('tls_days_remaining', 'gte', '29')] });
    expect(toHttps.outcome).toBe('up');
    expect((await check({ url: `${H}/chain?n=10` })).outcome).toBe('up');
    expect(await check({ url: `${H}/chain?n=11` })).toMatchObject({ outcome: 'down', cause: 'check_failed', message: 'more than 10 redirects' });
  });
  it('not followed: a 3xx passes without assertions, and is what assertions see', async () => {
    expect(await check({ url: `${H}/redirect`, followRedirects: false })).toMatchObject({ outcome: 'up', message: expect.stringMatching(/^HTTP 302 in/) });
    const r = await check({ url: `${H}/redirect`, followRedirects: false, assertions: [a('header', 'eq', '/ok', 'location')] });
    expect(r.outcome).toBe('up');
  });
  it('a final 3xx without Location fails when redirects are followed', async () => {
    expect(await check({ url: `${H}/status?code=304` })).toMatchObject({ outcome: 'down', cause: 'assertion_failed' });
  });
  it('a 303 after POST continues as GET without body; 307 keeps method and body', async () => {
    await check({ url: `${H}/redirect?code=303&to=/echo`, method: 'POST', body: 'x=1', headers: { 'Content-Type': 'text/plain' } });
    expect(received).toMatchObject({ method: 'GET', body: '' });
    expect(received!.headers['content-type']).toBeUndefined();
    await check({ url: `${H}/redirect?code=307&to=/echo`, method: 'POST', body: 'x=1' });
    expect(received).toMatchObject({ method: 'POST', body: 'x=1' });
  });
});

it('sends method, body and custom headers as configured', async () => {
  const r = await check({ url: `${H}/echo`, method: 'PUT', body: '{"a":1}', headers: { 'Content-Type': 'application/json', 'X-Custom': 'v 1' },
    assertions: [a('json_path', 'eq', 'PUT', '$.method')] });
  expect(r.outcome).toBe('up');
  expect(received).toMatchObject({ method: 'PUT', body: '{"a":1}' });
  expect(received!.headers).toMatchObject({ 'content-type': 'application/json', 'x-custom': 'v 1', 'content-length': '7' });
  expect(received!.headers['user-agent']).toMatch(/^Vigil/);
});

describe('failures of the target', () => {
  it('times out after timeoutSeconds', async () => {
    const t = Date.now();
    const r = await check({ url: `${H}/hang`, timeoutSeconds: 1 });
    expect(r).toMatchObject({ outcome: 'down', cause: 'timeout', message: 'timed out after 1 s', responseTimeMs: null });
    expect(Date.now() - t).toBeLessThan(3000);
  });
  it('stops when the context signal aborts', async () => {
    const r = await check({ url: `${H}/hang` }, ctx({}, AbortSignal.timeout(300)));
    expect(r).toMatchObject({ outcome: 'down', cause: 'timeout' });
  });
  it('connection refused', async () => {
    const closed = net.createServer();
    const port = await new Promise<number>((res) => closed.listen(0, '127.0.0.1', () => res((closed.address() as AddressInfo).port)));
    await new Promise((res) => closed.close(res));
    expect(await check({ url: `http://127.0.0.1:${port}/` })).toMatchObject({ outcome: 'down', cause: 'connection_failed', message: 'connection refused' });
  });
  it('unknown host', async () => {
    expect(await check({ url: 'http://no-such-host.invalid/' })).toMatchObject({ outcome: 'down', cause: 'dns_failure', message: 'could not resolve no-such-host.invalid' });
  });
  it('untrusted certificate without the extra CA', async () => {
    const r = await check({ url: `${S}/ok` }, ctx({ extraCa: [] }));
    expect(r).toMatchObject({ outcome: 'down', cause: 'tls_error', message: expect.stringMatching(/^TLS error: certificate not trusted/) });
  });
  it('https to a plain-http port is a TLS error, in one line', async () => {
    const r = await check({ url: `https://127.0.0.1:${httpPort}/ok` });
    expect(r).toMatchObject({ outcome: 'down', cause: 'tls_error', message: expect.stringMatching(/^TLS error: handshake failed: [^\n]+$/) });
  });
});

it('measures phases of the final hop, in order', async () => {
  const r = await check({ url: `${H}/redirect?to=${encodeURIComponent(`${S}/ok`)}` });
  const p = r.phases!;
  expect(r.outcome).toBe('up');
  for (const k of ['dnsMs', 'connectMs', 'tlsMs', 'firstByteMs'] as const) expect(p[k]).toEqual(expect.any(Number));
  expect(p.dnsMs!).toBeLessThanOrEqual(p.connectMs!);
  expect(p.connectMs!).toBeLessThanOrEqual(p.tlsMs!);
  expect(p.tlsMs!).toBeLessThanOrEqual(p.firstByteMs!);
  expect(p.firstByteMs!).toBeLessThanOrEqual(r.responseTimeMs!);
});

describe('private addresses refused when allowPrivate is false', () => {
  const deny = () => ctx({ allowPrivate: false });
  it('a literal address and a name resolving to one', async () => {
    expect(await check({ url: `${H}/ok` }, deny())).toMatchObject({ outcome: 'down', cause: 'connection_failed', message: expect.stringContaining('private address') });
    expect(await check({ url: `${S}/ok` }, deny())).toMatchObject({ outcome: 'down', cause: 'connection_failed', message: expect.stringContaining('private address') });
  });
  it('on every redirect hop (the policy allows the first hop, then stops)', async () => {
    for (const to of [`${H}/ok`, `http://localhost:${httpPort}/ok`]) {
      let allowed = true;
      onFlip = () => { allowed = false; };
      const policy = { get allowPrivate() { return allowed; }, extraCa: [] };
      const r = await check({ url: `http://localhost:${httpPort}/flip?to=${encodeURIComponent(to)}` }, { ...ctx(), net: policy });
      expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed', message: expect.stringContaining('private address') });
    }
    onFlip = null;
  });
  (publicIp ? it : it.skip)('from a public first hop to a private one (needs a non-private local address)', async () => {
    const first = `http://${publicIp}:${publicPort}`;
    expect((await check({ url: `${first}/ok` }, deny())).outcome).toBe('up');
    const r = await check({ url: `${first}/redirect?to=${encodeURIComponent(`${H}/ok`)}` }, deny());
    expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed', message: expect.stringContaining('private address') });
  });
});
