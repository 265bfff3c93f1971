/**
 * Where Vigil sends SMS, by country (ISO 3166-1 alpha-2 of the number): an
 * open route, with the caveat people should know, or a closed one. A country
 * not listed is not supported (400 `sms_country_unsupported`); a closed one
 * is 400 `sms_route_not_open`. The table is documented in the README.
 *
 * Caveats: `sender-replaced` — carriers there replace the sender name with a
 * number; `registration-pending` — the country requires a sender
 * registration that is not complete yet, messages may be delayed or
 * filtered; `unverified` — delivery there has not been proven yet.
 */
export type SmsCaveat = 'sender-replaced' | 'registration-pending' | 'unverified' | null;

export interface SmsRoute { open: boolean; caveat: SmsCaveat }

const open = (caveat: SmsCaveat = null): SmsRoute => ({ open: true, caveat });
const closed: SmsRoute = { open: false, caveat: null };

export const SMS_COUNTRIES: Readonly<Record<string, SmsRoute>> = {
  // Europe
  GB: open(), IE: open(), DE: open(), FR: open(), ES: open(), IT: open(), NL: open(), BE: open(), LU: open(), AT: open(),
  CH: open(), SE: open(), NO: open(), DK: open(), FI: open(), IS: open(), PT: open(), PL: open(), CZ: open(), SK: open(),
  HU: open(), SI: open(), HR: open(), RO: open(), BG: open(), GR: open(), EE: open(), LV: open(), LT: open(), MT: open(), CY: open(),
  // Americas
  US: open('registration-pending'), CA: open('registration-pending'), MX: open('sender-replaced'), BR: open('sender-replaced'),
  AR: open('sender-replaced'), CL: open('sender-replaced'), CO: open('sender-replaced'),
  // Asia-Pacific
  AU: open(), NZ: open(), JP: open('sender-replaced'), SG: open('registration-pending'), HK: open(), KR: open('sender-replaced'),
  IN: open('registration-pending'), ID: open('unverified'), PH: open('unverified'), TH: open('unverified'), MY: open('unverified'),
  // Middle East and Africa
  IL: open(), AE: open('registration-pending'), SA: open('registration-pending'), ZA: open(), NG: open('unverified'), KE: open('unverified'),
  // Routes not open from this service.
  CN: closed, RU: closed, BY: closed, IR: closed, SY: closed, CU: closed, KP: closed,
};
