import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { ChannelKindDef, DeliveryContext, DeliveryResult } from './channel';
import { postForResult } from '../http';
import { invalid } from '../../pipeline/errors';

/** SMS bodies are kept to one or two segments. */
const MAX_TEXT = 300;

/** True when this server can send SMS (SMS_ACCOUNT_SID, SMS_AUTH_TOKEN and SMS_FROM set). */
export function smsConfigured(ctx: Pick<DeliveryContext, 'providers'>): boolean {
  const p = ctx.providers;
  return !!(p.smsAccountSid && p.smsAuthToken && p.smsFrom);
}

/**
 * Sends one SMS through the Twilio-compatible provider: a form POST to
 * `{SMS_PROVIDER_URL}/Accounts/{sid}/Messages.json` with basic auth. The
 * provider's words come back as the error; the token never does.
 */
export async function sendSms(to: string, text: string, ctx: DeliveryContext): Promise<DeliveryResult> {
  const p = ctx.providers;
  if (!smsConfigured(ctx)) return { delivered: false, error: 'SMS is not configured on this server (SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_FROM)', permanent: true };
  const body = new URLSearchParams({ To: to, From: p.smsFrom!, Body: text.slice(0, MAX_TEXT) }).toString();
  return postForResult(`${p.smsUrl}/Accounts/${encodeURIComponent(p.smsAccountSid!)}/Messages.json`, body, {
    ctx,
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${p.smsAccountSid}:${p.smsAuthToken}`).toString('base64')}`,
    },
    secrets: [p.smsAuthToken],
  });
}

/** A number in E.164 with its country, or null when it is not a possible phone number. */
export function parsePhone(input: string): { e164: string; country: string | null } | null {
  const cleaned = String(input ?? '').replace(/[\s\-.()]/g, '');
  if (!/^\+\d{6,15}$/.test(cleaned)) return null;
  const n = parsePhoneNumberFromString(cleaned);
  if (!n || !n.isValid()) return null;
  return { e164: n.number, country: n.country ?? null };
}

/** `sms`: enrolled by the receiving person (POST /sms/enrolment), never created through the channel API. */
export const sms: ChannelKindDef = {
  creatable: false,
  needsConfirmation: true,
  hasSecret: false,
  parseTarget() {
    throw invalid('kind', 'SMS channels are enrolled by the receiving person and cannot be created through the API (POST /sms/enrolment)');
  },
  async deliver(channel, message, ctx) {
    return sendSms(channel.target, `Vigil: ${message.text}`, ctx);
  },
};
