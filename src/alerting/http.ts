/**
 * The outbound HTTP of alert deliveries: one POST of a JSON body through the
 * network policy, and the turning of what came back (or the exception) into
 * a DeliveryResult carrying the provider's own words.
 */
import { SOCKET_WORDS } from '../net/socketWords';
import http, { STATUS_CODES } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { checkLiteral, guardedLookup } from '../net/policy';
import type { DeliveryContext, DeliveryResult } from './channels/channel';

/** The most of an answer read; providers' error bodies are short and only an excerpt is kept. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** The longest excerpt of a provider's answer put into an error. */
const EXCERPT_CHARS = 200;

/** What a provider answered. */
export interface HttpAnswer {
  status: number;
  /** The body as UTF-8 text, at most MAX_ANSWER_BYTES. */
  text: string;
  /** The Location header of a 3xx (null otherwise). */
  location: string | null;
}

/** Options of `postJson`. */
export interface PostOptions {
  /** Extra headers; they override the defaults (Content-Type, User-Agent). */
  headers?: Record<string, string>;
  ctx: DeliveryContext;
}

/** Raised when the delivery's signal times out; `seconds` is how long this request waited. */
export class DeliveryTimeoutError extends Error {
  readonly code = 'EDELIVERYTIMEOUT';
  constructor(readonly seconds: number) {
    super(`timed out after ${seconds < 10 ? Number(seconds.toFixed(1)) : Math.round(seconds)} s`);
  }
}

/**
 * POSTs `body` (a string is sent verbatim, anything else as JSON) to `url`
 * and resolves with the answer whatever its status; rejects only for network
 * failures (refused, DNS, TLS, policy, timeout).
 *
 * Every request goes through the network policy: names resolve through
 * `guardedLookup` and IP literals meet `checkLiteral` (Node skips `lookup` for
 * literals). Redirects are never followed: a redirect could lead to an address
 * the policy forbids (the check would happen again only if we re-implemented
 * it per hop) and following it would re-POST the signed payload, credentials
 * in headers included, to a host the channel's owner never named. A 3xx is
 * reported as a failure instead. TLS is verified against Node's roots plus the
 * policy's extra CAs. `agent: false` gives each delivery its own socket, so no
 * connection is shared between tenants.
 */
export function postJson(url: string | URL, body: unknown, opts: PostOptions): Promise<HttpAnswer> {
  const { ctx } = opts;
  const target = typeof url === 'string' ? new URL(url) : url;
  const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let settled = false;
    let cr: http.ClientRequest | undefined;
    const finish = (err: unknown, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      ctx.signal.removeEventListener('abort', onAbort);
      if (err) { cr?.destroy(); reject(err); } else resolve(answer!);
    };
    function onAbort() {
      const reason = ctx.signal.reason as { name?: string } | undefined;
      // AbortSignal.timeout aborts with a TimeoutError; any other abort is a cancellation.
      finish(reason?.name === 'TimeoutError' ? new DeliveryTimeoutError((performance.now() - started) / 1000) : new Error('delivery cancelled'));
    }
    if (ctx.signal.aborted) return onAbort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });

    if (target.protocol !== 'http:' && target.protocol !== 'https:') return finish(new Error(`unsupported URL scheme ${target.protocol}`));
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      try { checkLiteral(ctx.net, host); } catch (e) { return finish(e); }
    }
    const secure = target.protocol === 'https:';
    const options: https.RequestOptions = {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Vigil/1',
        ...opts.headers,
        'Content-Length': String(payload.length),
      },
      agent: false,
      lookup: guardedLookup(ctx.net),
      signal: ctx.signal,
      // `ca` replaces Node's bundle rather than adding to it, so the bundle is listed again.
      ...(secure ? { rejectUnauthorized: true, ...(ctx.net.extraCa.length > 0 ? { ca: [...tls.rootCertificates, ...ctx.net.extraCa] } : {}) } : {}),
    };
    try {
      cr = (secure ? https : http).request(target, options);
    } catch (e) {
      return finish(e); // e.g. a header value with a newline
    }
    cr.on('error', (e) => (ctx.signal.aborted ? onAbort() : finish(e)));
    cr.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const location = res.headers.location;
        finish(null, { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), location: typeof location === 'string' ? location : null });
      };
      res.on('error', (e) => (ctx.signal.aborted ? onAbort() : finish(e)));
      res.on('data', (chunk: Buffer) => {
        const room = MAX_ANSWER_BYTES - size;
        if (room <= 0) return;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        size += Math.min(chunk.length, room);
        if (size >= MAX_ANSWER_BYTES) { res.destroy(); done(); } // enough for an excerpt; don't download the rest
      });
      res.once('end', done);
    });
    cr.end(payload);
  });
}

/** Replaces every occurrence of the given secrets (and their URL-encoded forms) with "****". */
export function scrub(text: string, secrets: (string | null | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (!s || s.length < 4) continue; // a tiny "secret" would mangle ordinary words
    for (const form of new Set([s, encodeURIComponent(s)])) out = out.split(form).join('****');
  }
  return out;
}

/** Text squeezed to one short line: tags dropped from HTML error pages, whitespace collapsed, capped. */
function excerpt(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const plain = (title ?? text.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ').trim();
  return plain.length > EXCERPT_CHARS ? `${plain.slice(0, EXCERPT_CHARS - 1)}…` : plain;
}

/**
 * The provider's words in an answer: the usual message fields of a JSON error
 * (`message`, `description`, `error`, `errors`), else an excerpt of the body.
 */
export function providerWords(text: string): string {
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    if (j && typeof j === 'object') {
      const err = j.error as { message?: unknown } | string | undefined;
      const main = [j.message, j.description, typeof err === 'string' ? err : err?.message].find((v) => typeof v === 'string' && v.trim());
      const list = Array.isArray(j.errors) ? j.errors.map((e) => (typeof e === 'string' ? e : (e as { message?: string })?.message)).filter(Boolean) : [];
      const words = [main, ...list].filter(Boolean).join('; ');
      if (words) return excerpt(words);
    }
  } catch { /* not JSON: fall through to the raw text */ }
  return excerpt(text);
}

/**
 * A DeliveryResult from a provider's answer: 2xx is delivered; a 3xx is a
 * failure naming where it pointed (never followed, see postJson); anything
 * else is "HTTP <status>: <provider's words>". 4xx other than 408 and 429
 * (and permanent redirects, 301/308) are permanent: the same request would be
 * refused again, so it is not retried.
 */
export function answerResult(answer: HttpAnswer, words: (text: string) => string = providerWords): DeliveryResult {
  const { status } = answer;
  if (status >= 200 && status < 300) return { delivered: true, error: null };
  if (status >= 300 && status < 400) {
    const where = answer.location ? `redirected to ${excerpt(answer.location)}` : 'redirected';
    return { delivered: false, error: `HTTP ${status}: ${where}; deliveries do not follow redirects`, permanent: status === 301 || status === 308 };
  }
  const said = words(answer.text);
  const error = said ? `HTTP ${status}: ${said}` : `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim();
  return { delivered: false, error, permanent: status >= 400 && status < 500 && status !== 408 && status !== 429 };
}

const UNTRUSTED = /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED|CERT_UNTRUSTED)/;

/**
 * A DeliveryResult from a network failure: one line for people. A refusal by
 * the address policy is permanent (retrying cannot change the policy); other
 * network failures are retried.
 */
export function errorResult(err: unknown): DeliveryResult {
  const e = err as (Error & { code?: string; hostname?: string; address?: string; port?: number; errors?: unknown[] }) | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  // Happy-eyeballs connects fail with an AggregateError of each attempt; the first says enough.
  if (e instanceof AggregateError && !code && e.errors.length > 0) return errorResult(e.errors[0]);
  const text = (e instanceof Error ? e.message : String(err)).split('\n')[0].trim();
  const fail = (error: string, permanent = false): DeliveryResult => ({ delivered: false, error, ...(permanent ? { permanent } : {}) });
  if (e instanceof DeliveryTimeoutError) return fail(e.message);
  // checkLiteral words a literal as "X resolves to X, a private address…"; say "X is a private address…" instead.
  if (code === 'EFORBIDDEN_ADDRESS') return fail(text.replace(/^(\S+) resolves to \1, /, '$1 is '), true);
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'EAI_NODATA') return fail(`could not resolve ${e?.hostname ?? 'the host'}`);
  if (code === 'EAI_AGAIN' || code === 'EAI_FAIL') return fail(`DNS lookup of ${e?.hostname ?? 'the host'} failed`);
  if (code in SOCKET_WORDS) {
    const where = e?.address ? ` (${e.address}${e.port ? `:${e.port}` : ''})` : '';
    return fail(`${SOCKET_WORDS[code]}${where}`);
  }
  if (UNTRUSTED.test(code)) return fail(`TLS error: certificate not trusted (${code})`);
  if (code === 'CERT_HAS_EXPIRED') return fail(`TLS error: certificate expired (${code})`);
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return fail(`TLS error: certificate does not match the host name (${code})`);
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO') return fail(`TLS error: handshake failed (${code})`);
  if (code.startsWith('HPE_')) return fail(`invalid HTTP response (${code})`);
  return fail(code && !text.includes(code) ? `${text} (${code})` : text || 'delivery failed');
}

/** Options of `postForResult`: `secrets` are scrubbed from any error text. */
export interface PostForResultOptions extends PostOptions {
  secrets?: (string | null | undefined)[];
  /** How to read the provider's words from an error body (default `providerWords`). */
  words?: (text: string) => string;
}

/** Posts and classifies in one: the DeliveryResult of one POST, with secrets scrubbed from the error. */
export async function postForResult(url: string | URL, body: unknown, opts: PostForResultOptions): Promise<DeliveryResult> {
  let result: DeliveryResult;
  try {
    result = answerResult(await postJson(url, body, opts), opts.words);
  } catch (e) {
    result = errorResult(e);
  }
  return result.error ? { ...result, error: scrub(result.error, opts.secrets ?? []) } : result;
}
