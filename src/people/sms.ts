/**
 * SMS enrolment (session only): a person enrols their own phone number as
 * their `sms` channel. The number is parsed (libphonenumber-js), checked
 * against the country table (src/alerting/channels/smsCountries.ts), stored
 * sealed and unconfirmed, and sent a six-digit code; returning the code
 * confirms the channel. Codes are stored as a SHA-256, expire after ten
 * minutes and allow five wrong tries. Enrolling again replaces the earlier
 * number, which receives nothing more; an unconfirmed number receives nothing.
 */
import { randomInt } from 'node:crypto';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashToken, sameHash } from '../crypto/tokens';
import { parsePhone, sendSms, smsConfigured } from '../alerting/channels/sms';
import { SMS_COUNTRIES } from '../alerting/channels/smsCountries';
import { deliveryContext } from '../alerting/context';
import { audit } from '../domain/audit';
import type { Services } from '../pipeline/context';
import { ApiError, notFound } from '../pipeline/errors';

const CODE_MS = 10 * 60_000;
const MAX_TRIES = 5;

/** All but the last four digits masked, as channel reads show an enrolled number. */
export function maskNumber(e164: string): string {
  return `${e164.slice(0, 3)}${'•'.repeat(Math.max(0, e164.length - 7))}${e164.slice(-4)}`;
}

function smsNotIncluded(caller: Caller): ApiError {
  return new ApiError(402, 'sms_not_included', `The ${caller.plan.code} plan does not include SMS alerts.`, { plan: caller.plan.code });
}

const codeHash = (membershipId: string, code: string) => hashToken(`${membershipId}:${code}`);

/**
 * 503 `sms_unavailable`: this server has no SMS provider (SMS_ACCOUNT_SID,
 * SMS_AUTH_TOKEN, SMS_FROM), so no code could be sent. Not a provider's
 * refusal (502 `verification_code_not_sent`): nobody was asked. Connect maps
 * 503 to its standard `unavailable`, whose own HTTP status is 503 too, so
 * every transport answers alike.
 */
function smsUnavailable(): ApiError {
  return new ApiError(503, 'sms_unavailable', 'This server has no SMS provider configured, so it cannot send the code; ask its operator to set one up.');
}

/** POST /sms/enrolment. */
export async function enrolSms(db: Db, services: Services, caller: Caller, body: { phone: string; name?: string }) {
  if (!caller.plan.sms_included) throw smsNotIncluded(caller);
  if (!smsConfigured(deliveryContext(services))) throw smsUnavailable();
  const phone = parsePhone(body.phone);
  if (!phone) throw new ApiError(400, 'not_a_phone_number', 'That is not a phone number in international form (+14155552671).', {}, [{ field: 'phone', reason: 'is not a phone number' }]);
  const country = phone.country ?? '';
  const route = SMS_COUNTRIES[country];
  if (!route) throw new ApiError(400, 'sms_country_unsupported', `Vigil does not send SMS to ${country || 'that country'}.`, { country }, [{ field: 'phone', reason: 'its country is not supported' }]);
  if (!route.open) throw new ApiError(400, 'sms_route_not_open', `SMS to ${country} is not open from this service.`, { country }, [{ field: 'phone', reason: 'no open route to its country' }]);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const name = body.name?.trim() || `SMS ${phone.e164.slice(-4)}`;
  await db.transaction().execute(async (tx) => {
    // The earlier number (confirmed or not) goes: it receives nothing more.
    await tx.deleteFrom('notification_channels').where('owner_membership_id', '=', caller.membershipId).where('kind', '=', 'sms').execute();
    const channelId = newId('ch');
    await tx.insertInto('notification_channels').values({
      id: channelId, organization_id: caller.organizationId, workspace_id: null, owner_membership_id: caller.membershipId,
      kind: 'sms', name, target: maskNumber(phone.e164), enabled: true, confirmed_at: null,
      target_enc: services.secrets.seal(phone.e164), secret_enc: null, config: JSON.stringify({ country }),
    }).execute();
    await tx.insertInto('sms_enrolments').values({
      membership_id: caller.membershipId, channel_id: channelId, code_hash: codeHash(caller.membershipId, code), attempts: 0, expires_at: new Date(Date.now() + CODE_MS),
    }).onConflict((oc) => oc.column('membership_id').doUpdateSet({ channel_id: channelId, code_hash: codeHash(caller.membershipId, code), attempts: 0, expires_at: new Date(Date.now() + CODE_MS), created_at: new Date() })).execute();
    await audit(tx, caller, { action: 'sms.enrolment_started', resourceType: 'notification_channel', resourceId: channelId, changes: { kind: { from: null, to: 'sms' }, target: { from: null, to: maskNumber(phone.e164) } } });
    // Sent inside the transaction: a refusal keeps nothing (the earlier number included).
    const sent = await sendSms(phone.e164, `Your Vigil verification code is ${code}. It expires in 10 minutes.`, deliveryContext(services));
    if (!sent.delivered) {
      throw new ApiError(502, 'verification_code_not_sent', 'The SMS provider did not take the verification code; nothing was changed. Try again later.', {},
        [{ field: 'phone', reason: sent.error ?? 'the provider refused it' }]);
    }
  });
  return { country, caveat: route.caveat };
}

/** POST /sms/enrolment/confirm. */
export async function confirmSms(db: Db, caller: Caller, body: { code: string }) {
  if (!caller.plan.sms_included) throw smsNotIncluded(caller);
  const code = String(body.code ?? '').trim();
  if (!/^\d{6}$/.test(code)) throw new ApiError(400, 'verification_code_malformed', 'The code is the six digits of the SMS.', {}, [{ field: 'code', reason: 'must be six digits' }]);
  return db.transaction().execute(async (tx) => {
    // The row lock is the limit's atomicity: concurrent confirms are compared and counted one after another
    // (each reads the count the one before it wrote, or no enrolment once it is void), so no more than
    // MAX_TRIES codes are ever compared per enrolment, however many arrive at once.
    const e = await tx.selectFrom('sms_enrolments').selectAll().where('membership_id', '=', caller.membershipId).forUpdate().executeTakeFirst();
    if (!e) throw notFound('SMS enrolment', 'code');
    if (e.expires_at <= new Date()) {
      // An expired code is as wrong as a mistyped one (the contract's words), and void.
      await tx.deleteFrom('sms_enrolments').where('membership_id', '=', caller.membershipId).execute();
      return { wrong: true as const, left: 0 };
    }
    if (!sameHash(e.code_hash, codeHash(caller.membershipId, code))) {
      const tries = e.attempts + 1;
      if (tries >= MAX_TRIES) {
        // The code is void: the number stays unconfirmed until it is enrolled again.
        await tx.deleteFrom('sms_enrolments').where('membership_id', '=', caller.membershipId).execute();
      } else {
        await tx.updateTable('sms_enrolments').set({ attempts: tries }).where('membership_id', '=', caller.membershipId).execute();
      }
      return { wrong: true as const, left: Math.max(0, MAX_TRIES - tries) };
    }
    await tx.updateTable('notification_channels').set({ confirmed_at: new Date() }).where('id', '=', e.channel_id).execute();
    await tx.deleteFrom('sms_enrolments').where('membership_id', '=', caller.membershipId).execute();
    await audit(tx, caller, { action: 'sms.enrolment_confirmed', resourceType: 'notification_channel', resourceId: e.channel_id, changes: { confirmed: { from: false, to: true } } });
    return { wrong: false as const, left: 0 };
  }).then((r) => {
    // Thrown after the transaction so the counted try is kept.
    if (r.wrong) {
      throw new ApiError(400, 'verification_code_incorrect', r.left > 0 ? `That code is not right; ${r.left} ${r.left === 1 ? 'try' : 'tries'} left.` : 'That code is not right, and it is now void: enrol the number again.',
        { triesLeft: String(r.left) }, [{ field: 'code', reason: 'is not right' }]);
    }
    return { ok: true as const };
  });
}
