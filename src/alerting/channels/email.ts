import { domainToASCII } from 'node:url';
import tls from 'node:tls';
import { createTransport } from 'nodemailer';
import type { AlertMessage, ChannelKindDef, DeliveryContext, DeliveryResult } from './channel';
import { invalid } from '../../pipeline/errors';
import { DeliveryTimeoutError, errorResult, scrub } from '../http';
import { alertFacts, alertTitle } from './text';

/** RFC 5321 dot-atom local part (ASCII; quoted local parts and SMTPUTF8 are not accepted). */
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Validates one e-mail address: a dot-atom local part (≤ 64), a domain of at
 * least two DNS labels with a non-numeric TLD (IDNs become punycode), ≤ 254 in
 * all. The domain is lower-cased (it is case-insensitive; the local part may
 * not be, so it is kept). Returns the normalised address.
 */
export function parseEmailAddress(input: string, field = 'target'): string {
  const raw = typeof input === 'string' ? input.trim() : '';
  const at = raw.lastIndexOf('@');
  const bad = () => invalid(field, 'must be one e-mail address (name@example.com)');
  if (at < 1 || at === raw.length - 1) throw bad();
  const local = raw.slice(0, at);
  const domain = domainToASCII(raw.slice(at + 1).toLowerCase());
  const labels = domain.split('.');
  if (local.length > 64 || !LOCAL.test(local)) throw bad();
  if (!domain || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels[labels.length - 1])) throw bad();
  const address = `${local}@${domain}`;
  if (address.length > 254) throw bad();
  return address;
}

/** The plain-text body of an alert mail: the one-line text, the incident's or error issue's facts, where it came from. */
export function alertMailText(message: AlertMessage, baseUrl: string): string {
  const facts = alertFacts(message).map(([k, v]) => `${k}: ${v}`);
  return [message.text, '', ...facts, ...(facts.length ? [''] : []), `Sent by Vigil (${baseUrl}).`].join('\n');
}

/** Seconds waited so far, for "timed out after N s". */
function since(started: number): number {
  return (performance.now() - started) / 1000;
}

/** The server's words for a refusal: its reply line when there is one ("550 5.1.1 no such user"). */
function mailFailure(err: unknown, started: number): DeliveryResult {
  const e = err as { name?: string; code?: string; cause?: { name?: string }; response?: string; responseCode?: number; command?: string };
  if (e?.code === 'EABORT') {
    return { delivered: false, error: e.cause?.name === 'TimeoutError' ? new DeliveryTimeoutError(since(started)).message : 'delivery cancelled' };
  }
  if (typeof e?.response === 'string' && e.response) {
    const reply = e.response.replace(/\s+/g, ' ').trim();
    const code = e.responseCode ?? 0;
    // 5xx is a final refusal (503 only means a bad command sequence); 4xx asks to try again later.
    return { delivered: false, error: `SMTP ${e.command ? `${e.command} ` : ''}refused: ${reply}`, ...(code >= 500 && code !== 503 ? { permanent: true } : {}) };
  }
  // nodemailer re-codes socket errors (ESOCKET, EDNS) and keeps the socket's own code as originalCode.
  const o = err as { originalCode?: string; message?: string };
  const base = errorResult(o?.originalCode ? Object.assign(new Error(o.message), { ...o, code: o.originalCode }) : err);
  return { ...base, error: `could not reach the SMTP server: ${base.error}` };
}

/**
 * Sends one plain-text mail to `to` through SMTP_URL (alerts, confirmations,
 * status-page subscribers). The SMTP server is chosen by
 * the operator, not by whoever creates a channel (they only choose the
 * recipient address, which the relay handles), so the private-address rule
 * does not apply to it: a relay on localhost or the private network is the
 * usual set-up. The policy's trust does apply: STARTTLS/smtps are verified
 * against Node's roots plus the extra CAs. Nothing weakens verification; a
 * plain local relay that advertises STARTTLS with an untrusted certificate
 * can be reached with `?ignoreTLS=true` on SMTP_URL (nodemailer reads URL
 * query options), or trusted by adding its CA.
 */
export async function sendMail(to: string, ctx: DeliveryContext, mail: { subject: string; text: string; headers: Record<string, string> }): Promise<DeliveryResult> {
  const smtpUrl = ctx.providers.smtpUrl;
  if (!smtpUrl) return { delivered: false, error: 'no SMTP server is configured (SMTP_URL)' };
  const started = performance.now();
  let password = '';
  try { password = decodeURIComponent(new URL(smtpUrl).password); } catch { /* nodemailer reports a bad URL itself */ }
  const transport = createTransport({
    url: smtpUrl,
    // The delivery's signal bounds the whole exchange; these only stop a silent peer from holding a socket past it.
    connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000,
    ...(ctx.net.extraCa.length > 0 ? { tls: { ca: [...tls.rootCertificates, ...ctx.net.extraCa] } } : {}),
  });
  try {
    await transport.sendMail({ from: ctx.providers.mailFrom, to, ...mail, signal: ctx.signal });
    return { delivered: true, error: null };
  } catch (e) {
    const result = mailFailure(e, started);
    return { ...result, error: scrub(result.error ?? '', [password]) };
  } finally {
    transport.close();
  }
}

/**
 * `email`: one address, sent through the operator's SMTP relay from
 * MAIL_FROM. Nothing but the confirmation mail goes out until the recipient
 * follows its link (the dispatcher enforces that; `needsConfirmation` says so).
 */
export const email: ChannelKindDef = {
  creatable: true,
  needsConfirmation: true,
  hasSecret: false,
  parseTarget(target) {
    const address = parseEmailAddress(target);
    return { target: address, display: address, config: {}, secretStored: false };
  },
  deliver(channel, message, ctx) {
    return sendMail(channel.target, ctx, {
      subject: `[Vigil] ${alertTitle(message)}`,
      text: alertMailText(message, ctx.baseUrl),
      // Auto-Submitted stops vacation responders answering alerts (RFC 3834).
      headers: { 'Auto-Submitted': 'auto-generated', 'X-Vigil-Event': message.event, 'X-Vigil-Delivery': message.id },
    });
  },
  sendConfirmation(channel, link, ctx) {
    const text = [
      `Confirm that alerts from Vigil may be sent to this address: ${link}`,
      '',
      `This address was added as the notification channel "${channel.name}".`,
      'If you did not expect this message, ignore it: nothing else is sent here unless the link is followed.',
    ].join('\n');
    return sendMail(channel.target, ctx, { subject: '[Vigil] Confirm alerts to this address', text, headers: { 'Auto-Submitted': 'auto-generated' } });
  },
};
