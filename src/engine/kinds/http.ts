import { assertionsSchema, type CheckContext, type CheckKind, type CheckResult } from './kind';
import { runAssertions, type HttpAssertion } from '../http/assertions';
import { CheckTimeoutError, TargetError, classifyNetworkError } from '../http/errors';
import { sendOnce, type HopResponse } from '../http/request';

/** Redirects followed at most; a response still redirecting after that fails the check. */
export const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Dropped when a redirect leaves the origin: they are the monitor's credentials, meant for the configured host only. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
/** Dropped when a redirect turns the request into a GET without body. */
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);
const USER_AGENT = 'Vigil/0.1 (uptime check)';
const DAY_MS = 86_400_000;

/** An http config with its defaults applied. */
interface HttpConfig {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
  timeoutSeconds: number;
  followRedirects: boolean;
  assertions: HttpAssertion[];
}

function withDefaults(config: Partial<HttpConfig>): HttpConfig {
  // Stored configs have defaults filled on create; applying them again keeps older or hand-made configs working.
  return {
    url: String(config.url),
    method: config.method ?? 'GET',
    headers: config.headers ?? {},
    body: config.body ?? null,
    timeoutSeconds: config.timeoutSeconds ?? 30,
    followRedirects: config.followRedirects ?? true,
    assertions: config.assertions ?? [],
  };
}

function without(headers: Record<string, string>, names: Set<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.has(k.toLowerCase())));
}

function isFollowed(status: number, location: unknown): boolean {
  return REDIRECTS.has(status) && typeof location === 'string' && location !== '';
}

/** Sends the request and follows redirects (when configured) up to the final response. */
async function fetchFinal(cfg: HttpConfig, ctx: CheckContext, signal: AbortSignal, t0: number): Promise<HopResponse> {
  let url = new URL(cfg.url);
  let method = cfg.method;
  let body = cfg.body;
  let headers = cfg.headers;
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'user-agent')) headers = { ...headers, 'User-Agent': USER_AGENT };
  for (let redirects = 0; ; redirects++) {
    const follow = (status: number, h: { location?: string }) => cfg.followRedirects && isFollowed(status, h.location);
    // Each hop goes through sendOnce, hence through the policy's lookup (or literal check) again.
    const res = await sendOnce({ url, method, headers, body, readBody: (s, h) => !follow(s, h) }, ctx.net, signal, t0);
    if (!follow(res.status, res.headers)) return res;
    if (redirects >= MAX_REDIRECTS) throw new TargetError(`more than ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(res.headers.location!, url); // relative Locations resolve against the current hop
    } catch {
      throw new TargetError(`HTTP ${res.status} redirects to an invalid Location`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new TargetError(`HTTP ${res.status} redirects to an unsupported ${next.protocol} URL`);
    // As browsers do: 303 always, and 301/302 after a POST, continue as a GET without body.
    if (res.status === 303 ? method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
      method = 'GET';
      body = null;
      headers = without(headers, BODY_HEADERS);
    }
    if (next.origin !== url.origin) headers = without(headers, CREDENTIAL_HEADERS);
    url = next;
  }
}

/** Turns the final response into an outcome: assertions when there are any, else a 2xx (or unfollowed 3xx) status. */
function conclude(cfg: HttpConfig, res: HopResponse, ctx: CheckContext): CheckResult {
  const total = Math.round(res.endMs);
  const r = (v: number | null) => (v === null ? null : Math.round(v));
  const phases = { dnsMs: r(res.phases.dnsMs), connectMs: r(res.phases.connectMs), tlsMs: r(res.phases.tlsMs), firstByteMs: r(res.phases.firstByteMs) };
  const summary = `HTTP ${res.status} in ${total} ms`;
  const result = (outcome: CheckResult['outcome'], message: string): CheckResult =>
    ({ outcome, cause: outcome === 'up' ? null : 'assertion_failed', message, responseTimeMs: total, phases });
  if (cfg.assertions.length === 0) {
    const ok = (res.status >= 200 && res.status < 300) || (!cfg.followRedirects && res.status >= 300 && res.status < 400);
    return ok ? result('up', summary) : result('down', `${summary}, expected 2xx${cfg.followRedirects ? '' : ' or 3xx'}`);
  }
  const tlsDaysRemaining = res.certNotAfter ? Math.floor((res.certNotAfter.getTime() - ctx.now.getTime()) / DAY_MS) : null;
  const verdicts = runAssertions(cfg.assertions, { statusCode: res.status, responseTimeMs: total, body: res.body, headers: res.headers, tlsDaysRemaining });
  const failed = verdicts.filter((v) => !v.passed);
  if (failed.length === 0) return result('up', summary);
  // A hard failure wins; a response that is only slow degrades the monitor instead of taking it down.
  const first = failed.find((v) => !v.soft) ?? failed[0];
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more assertion${failed.length > 2 ? 's' : ''} failed)` : '';
  return result(failed.some((v) => !v.soft) ? 'down' : 'degraded', `${first.message}${more}`);
}

/**
 * HTTP(S) request with assertions on status, time, body, headers, JSON and
 * certificate. A failing `response_time_ms` assertion alone degrades the
 * monitor; any other failing assertion takes it down.
 */
/** The URL must be one a check can send to: it parses, and names a port from 1 to 65535 if any. */
function checkUrl(config: { url: string }): { field: string; reason: string } | null {
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    return { field: 'config.url', reason: 'is not a valid URL' };
  }
  if (url.port === '0') return { field: 'config.url', reason: 'port must be 1 to 65535' };
  return null;
}

export const http: CheckKind = {
  checkConfig: checkUrl,
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 },
      method: { enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], default: 'GET' },
      headers: { type: 'object', additionalProperties: { type: 'string' }, default: {} },
      body: { type: ['string', 'null'], maxLength: 65536, default: null },
      timeoutSeconds: { type: 'integer', minimum: 1, maximum: 60, default: 30 },
      followRedirects: { type: 'boolean', default: true },
      assertions: assertionsSchema(['status_code', 'response_time_ms', 'body', 'header', 'json_path', 'tls_days_remaining']),
    },
  },
  sealedFields: ['headers', 'body'],
  hasPingUrl: false,

  async check(config: Partial<HttpConfig>, ctx: CheckContext): Promise<CheckResult> {
    const cfg = withDefaults(config);
    const t0 = performance.now();
    // One deadline for the whole check (all hops and the body), cut short by the worker's own signal.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new CheckTimeoutError(`timed out after ${cfg.timeoutSeconds} s`)), cfg.timeoutSeconds * 1000);
    const onStop = () => deadline.abort(new CheckTimeoutError('timed out'));
    if (ctx.signal.aborted) onStop();
    else ctx.signal.addEventListener('abort', onStop, { once: true });
    let host = '';
    try {
      host = new URL(cfg.url).hostname;
      return conclude(cfg, await fetchFinal(cfg, ctx, deadline.signal, t0), ctx);
    } catch (err) {
      const { cause, message } = classifyNetworkError(err, host);
      return { outcome: 'down', cause, message, responseTimeMs: null };
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onStop);
    }
  },
};
