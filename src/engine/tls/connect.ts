import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { CheckTimeoutError } from '../http/errors';

/**
 * The audit's client offer: forward-secret AEAD suites first (so a server
 * honouring the client's order picks what a modern browser would get), then
 * everything else down to NULL encryption at security level 0, so weak
 * servers still complete a handshake and can be graded instead of merely failing.
 */
export const AUDIT_CIPHERS = 'ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:DHE+CHACHA20:ECDHE:DHE:HIGH:MEDIUM:ALL:eNULL:!aNULL:@SECLEVEL=0';

/** Longest a single handshake may take. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;

/** A completed handshake. */
export interface Handshake { socket: tls.TLSSocket; ms: number }

/**
 * Opens a TLS connection (never rejecting for certificate problems: those are
 * inspected afterwards). Rejects with the socket's error, or a
 * CheckTimeoutError after `timeoutMs` or when `signal` aborts.
 */
export function handshake(options: tls.ConnectionOptions, signal: AbortSignal, timeoutMs = HANDSHAKE_TIMEOUT_MS): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(new CheckTimeoutError('timed out')); return; }
    const t0 = performance.now();
    const socket = tls.connect({ ...options, rejectUnauthorized: false });
    const finish = (err: unknown) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onStop);
      socket.removeAllListeners('secureConnect');
      if (err) {
        socket.on('error', () => {});
        socket.destroy();
        reject(err);
      } else {
        resolve({ socket, ms: performance.now() - t0 });
      }
    };
    const onStop = () => finish(new CheckTimeoutError('timed out'));
    const timer = setTimeout(() => finish(new CheckTimeoutError(`TLS handshake timed out after ${timeoutMs / 1000} s`)), timeoutMs);
    signal.addEventListener('abort', onStop, { once: true });
    socket.once('secureConnect', () => finish(null));
    socket.once('error', (e) => finish(e));
  });
}

/** Protocol versions the audit probes, oldest first. */
export const PROBED_VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
export type ProbedVersion = typeof PROBED_VERSIONS[number];

/**
 * True when the server completes a handshake limited to `version`. TLS 1.0 and
 * 1.1 need security level 0 in OpenSSL 3 (their handshakes sign with SHA-1).
 */
export async function acceptsVersion(address: string, port: number, servername: string | undefined, version: ProbedVersion, signal: AbortSignal): Promise<boolean> {
  const ciphers = version === 'TLSv1' || version === 'TLSv1.1' ? 'DEFAULT:@SECLEVEL=0' : AUDIT_CIPHERS;
  try {
    const { socket } = await handshake({ host: address, port, servername, minVersion: version, maxVersion: version, ciphers }, signal, 8000);
    const accepted = socket.getProtocol() === version;
    socket.destroy();
    return accepted;
  } catch {
    return false;
  }
}

/** The certificates the server presented, leaf first, as far as Node links them by issuer. */
export function peerChain(socket: tls.TLSSocket): X509Certificate[] {
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert && cert.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    out.push(new X509Certificate(cert.raw));
    cert = cert.issuerCertificate;
  }
  return out;
}

/** What a HEAD / on the TLS connection told about HSTS. */
export interface HstsReading {
  /** The service answered HTTP at all (if not, HSTS does not apply). */
  http: boolean;
  /** `max-age` of Strict-Transport-Security in seconds, null when absent. */
  maxAge: number | null;
}

/**
 * Sends `HEAD /` over the audited connection and reads the response head, to
 * grade HSTS (A+) without another handshake. A service that is not HTTP
 * answers something else or nothing; after `timeoutMs` it counts as not HTTP.
 */
export function readHsts(socket: tls.TLSSocket, hostHeader: string, signal: AbortSignal, timeoutMs = 3000): Promise<HstsReading> {
  return new Promise((resolve) => {
    let buffered = '';
    const done = (reading: HstsReading) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onStop);
      socket.removeListener('data', onData);
      socket.removeListener('close', onClose);
      resolve(reading);
    };
    const parse = (): HstsReading => {
      const head = buffered.split('\r\n\r\n')[0];
      if (!/^HTTP\/\d(\.\d)? \d{3}/.test(head)) return { http: false, maxAge: null };
      const line = head.split('\r\n').find((l) => /^strict-transport-security\s*:/i.test(l));
      const age = line ? /max-age\s*=\s*"?(\d+)"?/i.exec(line) : null;
      return { http: true, maxAge: age ? Number(age[1]) : null };
    };
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      // A greeting that is not a status line (SMTP, IMAP) settles it without waiting for the time-out.
      const firstLine = buffered.includes('\r\n') || buffered.includes('\n');
      if (buffered.includes('\r\n\r\n') || buffered.length > 16_384 || (firstLine && !/^HTTP\//.test(buffered))) done(parse());
    };
    const onClose = () => done(parse());
    const onStop = () => done({ http: false, maxAge: null });
    const timer = setTimeout(onStop, timeoutMs);
    signal.addEventListener('abort', onStop, { once: true });
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.on('error', () => {});
    socket.write(`HEAD / HTTP/1.1\r\nHost: ${hostHeader}\r\nUser-Agent: Vigil monitor\r\nConnection: close\r\n\r\n`);
  });
}
