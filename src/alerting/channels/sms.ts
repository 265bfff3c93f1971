import type { ChannelKindDef } from './channel';
import { enrolledKind } from './enrolled';

/** `sms`: enrolled by the receiving person, never created through the API; no sender on this server yet. */
export const sms: ChannelKindDef = enrolledKind('SMS');
