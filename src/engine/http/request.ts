import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import { checkLiteral, guardedLookup, type NetPolicy } from '../../net/policy';

/** The most of a response body a check reads; the rest is cut off (and the connection closed). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Timing of one request, in milliseconds from the start of the check; null when the phase did not happen. */
export interface Phases { dnsMs: number | null; connectMs: number | null; tlsMs: number | null; firstByteMs: number | null }

/** One request to send (one hop of a check). */
export interface HopRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | null;
  /** When false the response body is not read (a redirect about to be followed). */
  readBody: (status: number, headers: IncomingHttpHeaders) => boolean;
}

/** What one hop received. */
export interface HopResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** UTF-8 text of the (decoded) body, at most MAX_BODY_BYTES; empty when not read. */
  body: string;
  truncated: boolean;
  /** notAfter of the peer's leaf certificate; null over plain http. */
  certNotAfter: Date | null;
  phases: Phases;
  /** When the body was read (or dropped), ms from the start of the check. */
  endMs: number;
}

/** The set of CAs to verify against: Node's bundle plus the policy's extras (undefined: Node's bundle alone). */
function trustedCas(policy: NetPolicy): string[] | undefined {
  // `ca` replaces Node's bundle rather than adding to it, so the bundle is listed again.
  return policy.extraCa.length > 0 ? [...tls.rootCertificates, ...policy.extraCa] : undefined;
}

function decoder(res: IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  // Only a user-supplied Accept-Encoding makes servers compress; unzip so body assertions see text.
  if (enc === 'gzip' || enc === 'x-gzip' || enc === 'deflate') return res.pipe(zlib.createUnzip());
  if (enc === 'br') return res.pipe(zlib.createBrotliDecompress());
  return res;
}

/**
 * Sends one request through the network policy (guarded lookup for names,
 * literal check for IPs), times it from socket events and reads at most
 * MAX_BODY_BYTES of the body. Rejects with the socket's error, or with
 * `signal.reason` when the signal aborts (in any phase, body included).
 */
export function sendOnce(req: HopRequest, policy: NetPolicy, signal: AbortSignal, t0: number): Promise<HopResponse> {
  return new Promise((resolve, reject) => {
    const since = () => performance.now() - t0;
    const phases: Phases = { dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null };
    let settled = false;
    let cr: http.ClientRequest | undefined;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      cr?.destroy();
      reject(err);
    };
    const succeed = (value: HopResponse) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    function onAbort() { fail(signal.reason); }
    if (signal.aborted) return fail(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });

    const host = req.url.hostname.replace(/^\[|\]$/g, '');
    // Node skips `lookup` for literal addresses, so those are checked here.
    if (net.isIP(host)) {
      try { checkLiteral(policy, host); } catch (e) { return fail(e); }
    }
    const secure = req.url.protocol === 'https:';
    const options: https.RequestOptions = {
      method: req.method,
      headers: req.headers,
      agent: false, // a fresh socket per check, so every phase is measured and nothing is pooled across tenants
      lookup: guardedLookup(policy),
      ...(secure ? { ca: trustedCas(policy), rejectUnauthorized: true } : {}),
    };
    try {
      cr = (secure ? https : http).request(req.url, options);
    } catch (e) {
      return fail(e); // e.g. an invalid header value
    }
    cr.once('socket', (socket) => {
      socket.once('lookup', () => { phases.dnsMs ??= since(); });
      socket.once('connect', () => { phases.connectMs ??= since(); });
      if (secure) socket.once('secureConnect', () => { phases.tlsMs ??= since(); });
      // 'data' carries only application bytes (TLS records are already decrypted), so this is the first response byte.
      socket.once('data', () => { phases.firstByteMs ??= since(); });
    });
    cr.on('error', fail); // `on`, not `once`: a late second error must not go unhandled
    cr.once('response', (res) => {
      phases.firstByteMs ??= since();
      let certNotAfter: Date | null = null;
      if (secure) {
        const cert = (res.socket as TLSSocket).getPeerCertificate?.();
        const t = cert?.valid_to ? Date.parse(cert.valid_to) : NaN;
        certNotAfter = Number.isFinite(t) ? new Date(t) : null;
      }
      const done = (body: string, truncated: boolean) =>
        succeed({ status: res.statusCode ?? 0, headers: res.headers, body, truncated, certNotAfter, phases, endMs: since() });
      if (!req.readBody(res.statusCode ?? 0, res.headers)) {
        res.destroy();
        return done('', false);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const stream = decoder(res);
      res.on('error', fail);
      stream.on('error', fail);
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = MAX_BODY_BYTES - size;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        size += Math.min(chunk.length, room);
        if (size >= MAX_BODY_BYTES) {
          // Enough read: stop the transfer rather than download the rest.
          res.destroy();
          done(Buffer.concat(chunks).toString('utf8'), true);
        }
      });
      stream.once('end', () => done(Buffer.concat(chunks).toString('utf8'), false));
    });
    cr.end(req.body ?? undefined);
  });
}
