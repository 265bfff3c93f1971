import type { ChannelKind, ChannelKindDef } from './channel';
import { discord } from './discord';
import { email } from './email';
import { jsm } from './jsm';
import { pagerduty } from './pagerduty';
import { push } from './push';
import { satellite } from './satellite';
import { slack } from './slack';
import { sms } from './sms';
import { teams } from './teams';
import { telegram } from './telegram';
import { webhook } from './webhook';
import { whatsapp } from './whatsapp';

/** Every channel kind by name; typed as a full Record so a kind without a definition fails to compile. */
export const channelKinds: Record<ChannelKind, ChannelKindDef> = {
  email, webhook, telegram, slack, teams, discord, pagerduty, jsm, sms, whatsapp, satellite, push,
};

/** True when `s` names a channel kind (creatable or not). */
export function isChannelKind(s: unknown): s is ChannelKind {
  return typeof s === 'string' && Object.prototype.hasOwnProperty.call(channelKinds, s);
}

export type * from './channel';
