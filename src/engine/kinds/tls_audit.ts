import net from 'node:net';
import { hostname, port, type CheckContext, type CheckKind, type CheckResult, type Finding } from './kind';
import { checkLiteral, guardedLookup } from '../../net/policy';
import { CheckTimeoutError, classifyNetworkError } from '../http/errors';
import { AUDIT_CIPHERS, PROBED_VERSIONS, acceptsVersion, handshake, peerChain, readHsts, type HstsReading } from '../tls/connect';
import { trustedCa } from '../tls/fetch';
import { analyzeChain, trustStore } from '../tls/trust';
import { certificateFindings, describeLeaf } from '../tls/inspect';
import { HSTS_MIN_AGE, cipherFindings, grade } from '../tls/grade';

/** A tls_audit monitor's config after defaults. */
interface TlsAuditConfig { host: string; port: number; warnDays: number }

const VERSION_NAMES: Record<string, string> = { TLSv1: 'TLS 1.0', 'TLSv1.1': 'TLS 1.1', 'TLSv1.2': 'TLS 1.2', 'TLSv1.3': 'TLS 1.3' };

function protocolFindings(accepted: Record<string, boolean>): Finding[] {
  const out: Finding[] = [];
  if (accepted.TLSv1) out.push({ code: 'tls10_accepted', severity: 'warning', message: 'the server accepts TLS 1.0 (deprecated since 2021, RFC 8996)' });
  if (accepted['TLSv1.1']) out.push({ code: 'tls11_accepted', severity: 'warning', message: 'the server accepts TLS 1.1 (deprecated since 2021, RFC 8996)' });
  // A TLS 1.3-only server is modern, not missing anything.
  if (!accepted['TLSv1.2'] && !accepted['TLSv1.3']) out.push({ code: 'tls12_missing', severity: 'warning', message: 'the server supports neither TLS 1.2 nor TLS 1.3' });
  if (!accepted['TLSv1.3']) out.push({ code: 'tls13_missing', severity: 'info', message: 'the server does not support TLS 1.3' });
  return out;
}

function hstsFindings(h: HstsReading): Finding[] {
  if (!h.http) return []; // not an HTTP service: HSTS does not apply
  if (h.maxAge === null) return [{ code: 'hsts_missing', severity: 'info', message: 'no Strict-Transport-Security header (needed for A+)' }];
  if (h.maxAge < HSTS_MIN_AGE) return [{ code: 'hsts_short_max_age', severity: 'info', message: `HSTS max-age is ${h.maxAge} s; A+ needs at least ${HSTS_MIN_AGE} s (180 days)` }];
  return [{ code: 'hsts_ok', severity: 'info', message: `HSTS max-age=${h.maxAge}` }];
}

/** A check that could not grade: the network error's cause, one critical finding, no grade. */
function failed(err: unknown, host: string, responseTimeMs: number | null): CheckResult {
  const { cause, message } = classifyNetworkError(err, host);
  const code = cause === 'tls_error' ? 'handshake_failed' : 'connection_failed';
  return { outcome: 'down', cause, message, responseTimeMs, detail: { findings: [{ code, severity: 'critical', message }], grade: null, readings: [] } };
}

/**
 * Handshake and chain inspection graded A+ to F (T for trust problems), with
 * findings. One handshake (offering everything down to security level 0, so
 * weak servers can be graded) gives the certificate chain and the negotiated
 * suite; four more probe TLS 1.0 to 1.3 one at a time; a `HEAD /` over the
 * first connection reads HSTS for A+. Down (tls_error) on grade T or F or any
 * critical finding; degraded on warnings; up otherwise.
 */
export const tls_audit: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['host'],
    properties: {
      host: hostname,
      port: { ...port, default: 443 },
      warnDays: { type: 'integer', minimum: 1, maximum: 365, default: 14 },
    },
  },
  sealedFields: [],
  hasPingUrl: false,

  async check(raw: Partial<TlsAuditConfig>, ctx: CheckContext): Promise<CheckResult> {
    const config: TlsAuditConfig = { port: 443, warnDays: 14, ...raw } as TlsAuditConfig;
    const host = config.host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
    const literal = net.isIP(host) !== 0;
    const servername = literal ? undefined : host; // SNI carries names only
    let opened;
    try {
      if (literal) checkLiteral(ctx.net, host);
      const options = {
        host, port: config.port, servername, lookup: guardedLookup(ctx.net), ca: trustedCa(ctx.net),
        minVersion: 'TLSv1', maxVersion: 'TLSv1.3', ciphers: AUDIT_CIPHERS,
      } as const;
      opened = await handshake(options, ctx.signal).catch((err) => {
        // Some servers pick TLS 1.3 and then cannot complete it (a key too small for RSA-PSS): grade what TLS 1.2 gives.
        if (classifyNetworkError(err, host).cause !== 'tls_error') throw err;
        return handshake({ ...options, maxVersion: 'TLSv1.2' }, ctx.signal).catch(() => { throw err; });
      });
    } catch (err) {
      return failed(err, host, null);
    }
    const { socket } = opened;
    const responseTimeMs = Math.round(opened.ms);
    try {
      const protocol = socket.getProtocol() ?? '';
      const cipher = socket.getCipher().name;
      const address = socket.remoteAddress ?? host;
      const sent = peerChain(socket);
      const legacy = socket.getPeerCertificate(); // read now: the HEAD below ends with the server closing the socket
      if (sent.length === 0) throw Object.assign(new Error('the server sent no certificate'), { code: 'ERR_TLS_NO_CERT' });
      const defaultPort = config.port === 443;
      const hostHeader = `${literal && host.includes(':') ? `[${host}]` : host}${defaultPort ? '' : `:${config.port}`}`;
      // The probes go to the address the first handshake reached, so they judge the same server.
      const [chain, accepted, hsts] = await Promise.all([
        analyzeChain(sent, trustStore(ctx.net), ctx.net, ctx.signal),
        Promise.all(PROBED_VERSIONS.map((v) => acceptsVersion(address, config.port, servername, v, ctx.signal)))
          .then((list) => Object.fromEntries(PROBED_VERSIONS.map((v, i) => [v, list[i] || v === protocol]))),
        readHsts(socket, hostHeader, ctx.signal),
      ]);
      // Probes cut short by the deadline would read as "version refused": say timeout instead of grading that.
      if (ctx.signal.aborted) throw new CheckTimeoutError('timed out while probing protocol versions');
      const findings: Finding[] = [
        ...certificateFindings({
          host, chain, legacy, authorizationError: socket.authorizationError ? String(socket.authorizationError) : null,
          now: ctx.now, warnDays: config.warnDays,
        }),
        ...protocolFindings(accepted),
        ...cipherFindings(protocol, cipher),
        ...hstsFindings(hsts),
      ];
      const g = grade(findings, hsts.http ? hsts.maxAge : null);
      if (!findings.some((f) => f.severity !== 'info')) findings.unshift({ code: 'cert_ok', severity: 'info', message: describeLeaf(sent[0], ctx.now) });
      const critical = findings.filter((f) => f.severity === 'critical');
      const warnings = findings.filter((f) => f.severity === 'warning');
      const summary = `${VERSION_NAMES[protocol] ?? protocol}, ${cipher}`;
      const detail = { findings, grade: g.grade, readings: [] };
      if (g.grade === 'T' || g.grade === 'F' || critical.length > 0) {
        const why = (critical[0] ?? warnings[0])?.message ?? 'weak configuration';
        const ifTrusted = g.grade === 'T' ? ` (${g.ifTrusted} if trusted)` : '';
        return { outcome: 'down', cause: 'tls_error', message: `Grade ${g.grade}${ifTrusted}: ${why}`, responseTimeMs, detail };
      }
      if (warnings.length > 0) {
        const more = warnings.length > 1 ? ` (+${warnings.length - 1} more)` : '';
        return { outcome: 'degraded', cause: 'tls_error', message: `Grade ${g.grade}: ${warnings[0].message}${more}`, responseTimeMs, detail };
      }
      return { outcome: 'up', cause: null, message: `Grade ${g.grade}: ${summary}; ${describeLeaf(sent[0], ctx.now)}`, responseTimeMs, detail };
    } catch (err) {
      if (typeof (err as { code?: unknown })?.code !== 'string') throw err; // our bug, not the target's: runCheck reports it
      return failed(err, host, responseTimeMs);
    } finally {
      socket.destroy();
    }
  },
};
