import { SOCKET_WORDS } from '../../net/socketWords';
import type { FailureCause } from '../kinds/kind';

/** Raised (as an abort reason) when a check runs out of time, so it classifies as `timeout` whatever phase it was in. */
export class CheckTimeoutError extends Error {
  readonly code = 'ECHECKTIMEOUT';
}

/** A failure of the target that is not a socket error (bad redirect, too many hops): cause `check_failed`. */
export class TargetError extends Error {
  readonly code = 'ETARGET';
}

/** The cause and the one-line message a network failure becomes. */
export interface Classified { cause: FailureCause; message: string }

// Verification failures carry OpenSSL's X509 code names; handshake failures ERR_SSL_*/ERR_TLS_*.
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE',
]);
const TLS_WORDS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'certificate expired',
  CERT_NOT_YET_VALID: 'certificate not yet valid',
  CERT_REVOKED: 'certificate revoked',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate does not match the host name',
};

/** Messages are one line for people: the first line of an error, capped. */
function oneLine(text: string): string {
  const line = text.split('\n')[0].trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function isTlsCode(code: string): boolean {
  return UNTRUSTED.has(code) || code in TLS_WORDS || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.includes('CERT') || code === 'EPROTO';
}

/**
 * Maps an error from http/https/net/tls (or our own abort reasons) to a cause
 * and a short message. `host` names the target in DNS messages.
 */
export function classifyNetworkError(err: unknown, host: string): Classified {
  const e = err as (Error & { code?: string; errors?: unknown[] }) | undefined;
  // Happy-eyeballs connects fail with an AggregateError of each attempt; the first says enough.
  if (e instanceof AggregateError && e.errors.length > 0 && !(e as { code?: string }).code) return classifyNetworkError(e.errors[0], host);
  const code = typeof e?.code === 'string' ? e.code : '';
  // DNS errors name the host that failed, which after a redirect is not the configured one.
  const named = (err as { hostname?: unknown } | null | undefined)?.hostname;
  const name = typeof named === 'string' ? named : host;
  const text = e instanceof Error ? e.message : String(err);
  if (e instanceof CheckTimeoutError || code === 'ETIMEDOUT' || code === 'ABORT_ERR' || e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return { cause: 'timeout', message: e instanceof CheckTimeoutError ? text : 'timed out' };
  }
  if (e instanceof TargetError) return { cause: 'check_failed', message: text };
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'EAI_NODATA' || code === 'ENODATA') return { cause: 'dns_failure', message: `could not resolve ${name}` };
  if (code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'ESERVFAIL') return { cause: 'dns_failure', message: `DNS lookup of ${name} failed` };
  // checkLiteral words a literal as "X resolves to X, a private address…"; say "X is a private address…" instead.
  if (code === 'EFORBIDDEN_ADDRESS') return { cause: 'connection_failed', message: text.replace(/^(\S+) resolves to \1, /, '$1 is ') };
  if (code && isTlsCode(code)) {
    // OpenSSL messages run over several lines with source paths; its `reason` is the readable part.
    const given = (err as { reason?: unknown }).reason;
    const reason = typeof given === 'string' ? given : /error:[0-9A-Fa-f]+:[^:]*:[^:]*:([^:\n]+)/.exec(text)?.[1] ?? oneLine(text);
    const words = UNTRUSTED.has(code) ? 'certificate not trusted' : TLS_WORDS[code] ?? `handshake failed: ${reason}`;
    return { cause: 'tls_error', message: `TLS error: ${words} (${code})` };
  }
  if (code in SOCKET_WORDS) return { cause: 'connection_failed', message: SOCKET_WORDS[code] };
  if (code.startsWith('HPE_')) return { cause: 'check_failed', message: `invalid HTTP response (${code})` };
  if (code.startsWith('Z_')) return { cause: 'check_failed', message: `could not decode the response body (${code})` };
  // Other system errors (E...) are the socket's; Node's own ERR_* codes mean the request itself was unusable.
  const socketLevel = /^E[A-Z]+$/.test(code);
  return { cause: socketLevel ? 'connection_failed' : 'check_failed', message: code ? `${oneLine(text)} (${code})` : oneLine(text) };
}
