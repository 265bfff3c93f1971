import crypto from 'node:crypto';
import type { AlertMessage, ChannelKindDef } from './channel';
import { postForResult } from '../http';
import { parseHttpUrl, urlSecrets, hostOnly } from './url';

/** How old (or how far in the future) a signed timestamp may be by default, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

function unixSeconds(t: number | Date): number {
  return t instanceof Date ? Math.floor(t.getTime() / 1000) : Math.floor(t);
}

function hmacHex(secret: string, timestamp: number, body: string | Buffer): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/**
 * The `Vigil-Signature` header value for `body` sent at `timestamp` (unix
 * seconds, or a Date): `t=<seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 * The timestamp is inside the signed text so a receiver can refuse old
 * deliveries (replays) without trusting an unsigned header.
 */
export function signWebhook(secret: string, body: string | Buffer, timestamp: number | Date): string {
  const t = unixSeconds(timestamp);
  return `t=${t},v1=${hmacHex(secret, t, body)}`;
}

/**
 * Checks a `Vigil-Signature` header against the raw body: true when one of its
 * `v1` signatures matches (compared in constant time) and its timestamp is
 * within `toleranceSeconds` of `now` (unix seconds or a Date; default the
 * clock). Several `v1` entries are accepted so a receiver can verify across a
 * secret rotation.
 */
export function verifyWebhookSignature(
  secret: string, body: string | Buffer, header: string | null | undefined,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now: number | Date = Date.now() / 1000,
): boolean {
  if (!header) return false;
  let t: number | null = null;
  const given: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const [key, value] = [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) given.push(value.toLowerCase());
  }
  if (t === null || given.length === 0) return false;
  if (Math.abs(unixSeconds(now) - t) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  // timingSafeEqual needs equal lengths; both are 32 bytes here by the regex above.
  return given.some((sig) => crypto.timingSafeEqual(Buffer.from(sig, 'hex'), expected));
}

/** The JSON body of a webhook delivery (see docs/webhooks.md): `incident` or `errorIssue` says what it is about (both null for a test). */
export function webhookPayload(message: AlertMessage): Record<string, unknown> {
  return { id: message.id, event: message.event, occurredAt: message.occurredAt, text: message.text, incident: message.incident, errorIssue: message.errorIssue };
}

/**
 * `webhook`: a signed JSON POST to any http(s) URL. Credentials in the URL
 * (userinfo, sent by Node as Basic auth, or a token in the query) are allowed
 * but never displayed.
 */
export const webhook: ChannelKindDef = {
  creatable: true,
  needsConfirmation: false,
  hasSecret: true,
  parseTarget(target) {
    const url = parseHttpUrl(target);
    return { target: url.href, display: hostOnly(url), config: {}, secretStored: true };
  },
  async deliver(channel, message, ctx) {
    // An unsigned delivery is indistinguishable from a forgery to a verifying receiver, so none is sent.
    if (!channel.secret) return { delivered: false, error: 'this webhook channel has no signing secret', permanent: true };
    // Signed over the exact bytes sent: the body is serialised once and posted verbatim.
    const body = JSON.stringify(webhookPayload(message));
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': 'Vigil-Webhook/1',
      'Vigil-Event': message.event,
      'Vigil-Delivery': message.id,
      'Vigil-Signature': signWebhook(channel.secret, body, new Date()),
    };
    // The path is shown in the channel list, so only the signing key, query and password are secrets here.
    const [, query, password] = urlSecrets(channel.target);
    return postForResult(channel.target, body, { ctx, headers, secrets: [channel.secret, query, password] });
  },
};
