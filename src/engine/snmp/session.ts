import * as snmp from 'net-snmp';
import type { FailureCause } from '../kinds/kind';
import type { Target } from './target';

/** The snmp config fields that shape the request (see the kind's schema). */
export interface SnmpConfig {
  host: string;
  port?: number;
  version?: 'v2c' | 'v3';
  community?: string;
  username?: string;
  securityLevel?: 'noAuthNoPriv' | 'authNoPriv' | 'authPriv';
  authProtocol?: 'SHA' | 'SHA-256' | 'SHA-512' | 'MD5';
  authPassword?: string;
  privProtocol?: 'AES' | 'AES-256' | 'DES';
  privPassword?: string;
  oids: { oid: string; name?: string; unit?: string }[];
  assertions?: { reading: string; operator: string; value: string }[];
}

/** The whole request may take this long, v3 engine discovery included. */
export const REQUEST_TIMEOUT_MS = 5000;
// One retransmission halfway: UDP may drop a datagram, and a lost one should
// not cost the whole budget.
const ATTEMPT_TIMEOUT_MS = REQUEST_TIMEOUT_MS / 2;

const AUTH: Record<NonNullable<SnmpConfig['authProtocol']>, number> = {
  SHA: snmp.AuthProtocols.sha, 'SHA-256': snmp.AuthProtocols.sha256, 'SHA-512': snmp.AuthProtocols.sha512, MD5: snmp.AuthProtocols.md5,
};
// AES-256 is not standardised; "Blumenthal" key localisation is what
// Net-SNMP calls AES-256 (Cisco's "Reeder" variant is not offered).
const PRIV: Record<NonNullable<SnmpConfig['privProtocol']>, number> = {
  AES: snmp.PrivProtocols.aes, 'AES-256': snmp.PrivProtocols.aes256b, DES: snmp.PrivProtocols.des,
};

/** A request that could not be made or was not answered with varbinds. */
export interface RequestFailure { cause: FailureCause; message: string }

/** What one GET produced: the varbinds in request order, or why there are none. */
export type GetResult =
  | { ok: true; varbinds: snmp.Varbind[]; elapsedMs: number }
  | { ok: false; failure: RequestFailure; elapsedMs: number | null };

/** The v3 security level: the configured one, else the strongest the passwords given allow. */
export function securityLevelOf(config: SnmpConfig): NonNullable<SnmpConfig['securityLevel']> {
  if (config.securityLevel) return config.securityLevel;
  if (config.authPassword && config.privPassword) return 'authPriv';
  return config.authPassword ? 'authNoPriv' : 'noAuthNoPriv';
}

/** The v3 user for net-snmp, or a message naming what the config lacks. */
function v3User(config: SnmpConfig): snmp.User | string {
  if (!config.username) return 'SNMPv3 needs a username';
  const level = securityLevelOf(config);
  const user: snmp.User = { name: config.username, level: snmp.SecurityLevel[level] };
  if (level === 'noAuthNoPriv') return user;
  if (!config.authPassword) return `SNMPv3 ${level} needs an authPassword`;
  user.authProtocol = AUTH[config.authProtocol ?? 'SHA'];
  user.authKey = config.authPassword;
  if (level === 'authNoPriv') return user;
  if (!config.privPassword) return 'SNMPv3 authPriv needs a privPassword';
  user.privProtocol = PRIV[config.privProtocol ?? 'AES'];
  user.privKey = config.privPassword;
  return user;
}

/**
 * One SNMP GET of `oids` (a single PDU) to `target`, bounded by
 * REQUEST_TIMEOUT_MS and `signal`. Never throws. Messages are composed here
 * from addresses, codes and fixed words only: net-snmp's own error texts are
 * never passed on, as some quote the community, digests or the user's keys.
 */
export function get(config: SnmpConfig, target: Target, oids: string[], signal: AbortSignal): Promise<GetResult> {
  const port = config.port ?? 161;
  const where = `${target.transport === 'udp6' ? `[${target.address}]` : target.address}:${port}`;
  const v3 = config.version === 'v3';
  const options: snmp.SessionOptions = { port, transport: target.transport, retries: 1, timeout: ATTEMPT_TIMEOUT_MS };

  let session: snmp.Session;
  try {
    if (v3) {
      const user = v3User(config);
      if (typeof user === 'string') return Promise.resolve({ ok: false, failure: { cause: 'check_failed', message: user }, elapsedMs: null });
      session = snmp.createV3Session(target.address, user, options);
    } else {
      // "public" is every agent's factory default, and what net-snmp would pick anyway.
      session = snmp.createSession(target.address, config.community ?? 'public', { ...options, version: snmp.Version2c });
    }
  } catch (error) {
    return Promise.resolve({ ok: false, failure: describe(error as Error, where), elapsedMs: null });
  }
  // net-snmp re-emits socket errors oddly; a listener keeps any 'error' from throwing.
  session.on('error', () => {});

  const timedOut = (): RequestFailure => ({
    cause: 'timeout',
    message: `no response from ${where} within ${REQUEST_TIMEOUT_MS / 1000} s`
      + (v3 ? ' (SNMPv3 agents also stay silent on a wrong password or privacy protocol)' : ' (agents also stay silent on a wrong community)'),
  });

  return new Promise<GetResult>((resolve) => {
    const started = performance.now();
    let settled = false;
    const finish = (result: GetResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal.removeEventListener('abort', onAbort);
      try { session.close(); } catch { /* already closed */ }
      resolve(result);
    };
    const elapsed = () => Math.round(performance.now() - started);
    // v3 makes two exchanges (engine discovery, then the GET), each with
    // net-snmp's own timer: this one bounds the pair.
    const deadline = setTimeout(() => finish({ ok: false, failure: timedOut(), elapsedMs: null }), REQUEST_TIMEOUT_MS);
    const onAbort = () => finish({ ok: false, failure: { cause: 'timeout', message: `the check ran out of time waiting for ${where}` }, elapsedMs: null });
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });

    try {
      session.get(oids, (error, varbinds) => {
        if (!error && varbinds) return finish({ ok: true, varbinds, elapsedMs: elapsed() });
        if (error instanceof snmp.RequestTimedOutError) return finish({ ok: false, failure: timedOut(), elapsedMs: null });
        finish({ ok: false, failure: describe(error, where), elapsedMs: answered(error) ? elapsed() : null });
      });
    } catch (error) {
      finish({ ok: false, failure: describe(error as Error, where), elapsedMs: null });
    }
  });
}

/** True when the error came from a datagram the agent sent back. */
function answered(error: Error | null): boolean {
  return error instanceof snmp.ResponseInvalidError || error instanceof snmp.RequestFailedError;
}

/** Turns a net-snmp or socket error into a cause and a message safe to show. */
function describe(error: Error | null, where: string): RequestFailure {
  if (error instanceof snmp.ResponseInvalidError) {
    const codes = snmp.ResponseInvalidCode;
    switch (error.code) {
      case codes.EAuthFailure:
        // Raised for the agent's USM report (its text names the report:
        // "Unknown User Name", "Wrong Digest ...") or for a reply whose digest
        // does not match ours; only the report text is worth repeating.
        return { cause: 'connection_failed', message: `SNMPv3 authentication failed at ${where}: ${usmReport(error.message) ?? 'the response digest does not match (check authProtocol and authPassword)'}` };
      case codes.ECouldNotDecrypt:
        return { cause: 'connection_failed', message: `SNMPv3 could not decrypt the response from ${where} (check privProtocol and privPassword)` };
      case codes.ENotInTimeWindow:
        return { cause: 'connection_failed', message: `SNMPv3 response from ${where} is outside the time window` };
      case codes.ECommunityNoMatch:
        return { cause: 'connection_failed', message: `the response from ${where} carries another community` };
      default:
        return { cause: 'connection_failed', message: `invalid response from ${where} (${codes[error.code] ?? 'unreadable'})` };
    }
  }
  if (error instanceof snmp.RequestFailedError) {
    // The agent answered the whole request with an error-status (tooBig,
    // genErr, noAccess ...): it was reached, the check itself failed.
    const status = snmp.ErrorStatus[error.status] ?? 'GeneralError';
    return { cause: 'check_failed', message: `${where} answered with error ${status}` };
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ERR_OSSL_EVP_UNSUPPORTED') return { cause: 'check_failed', message: 'DES privacy is not supported by this server\'s OpenSSL; use AES' };
  if (code) return { cause: 'connection_failed', message: `could not reach ${where} (${code})` };
  return { cause: 'connection_failed', message: `request to ${where} failed` };
}

const USM_REPORTS = ['Unsupported Security Level', 'Not In Time Window', 'Unknown User Name', 'Unknown Engine ID', 'Wrong Digest', 'Decryption Error'];

/** The USM report named by an EAuthFailure message, if it is one ("Wrong Digest (incorrect password, community or key)"). */
function usmReport(message: string): string | null {
  return USM_REPORTS.some((r) => message.startsWith(r)) ? message : null;
}
