import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import tls from 'node:tls';
import { checkLiteral, type NetPolicy } from '../../net/policy';

/** Node's CA bundle plus the policy's extra CAs: what checks trust. */
export function trustedCa(policy: NetPolicy): string[] {
  return policy.extraCa.length ? [...tls.rootCertificates, ...policy.extraCa] : [...tls.rootCertificates];
}

/** Options of `fetchSmall`. */
export interface SmallFetch {
  policy: NetPolicy;
  /** How host names are resolved (guardedLookup or a check resolver's lookup). */
  lookup: LookupFunction;
  signal: AbortSignal;
  /** Connect to this port instead of the URL's (the URL's host still names the server for SNI and Host). */
  port?: number;
  timeoutMs?: number;
  maxBytes?: number;
}

/** The response of `fetchSmall`. */
export interface SmallResponse { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

/**
 * GETs a small document (a policy file, an issuer certificate) without
 * following redirects. Rejects on network and TLS errors (certificates are
 * verified against `trustedCa`), on a body over `maxBytes`, and on time-out.
 */
export function fetchSmall(url: URL, opts: SmallFetch): Promise<SmallResponse> {
  const { timeoutMs = 10_000, maxBytes = 64 * 1024 } = opts;
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    try {
      if (net.isIP(host)) checkLiteral(opts.policy, host);
    } catch (e) { reject(e); return; }
    const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)]);
    const secure = url.protocol === 'https:';
    const options: https.RequestOptions = {
      host, port: opts.port ?? (url.port ? Number(url.port) : secure ? 443 : 80), path: `${url.pathname}${url.search}`,
      method: 'GET', headers: { host: url.host, 'user-agent': 'Vigil monitor', accept: '*/*' },
      lookup: opts.lookup, signal, agent: false,
      ...(secure ? { ca: trustedCa(opts.policy), servername: net.isIP(host) ? undefined : host } : {}),
    };
    const req = (secure ? https : http).request(options, (res) => {
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) { req.destroy(new Error(`response larger than ${maxBytes} bytes`)); return; }
        parts.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', (e) => reject(signal.aborted && !opts.signal.aborted ? new Error(`timed out after ${timeoutMs / 1000} s`) : e));
    req.end();
  });
}
