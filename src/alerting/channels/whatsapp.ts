import type { ChannelKindDef } from './channel';
import { enrolledKind } from './enrolled';

/** `whatsapp`: enrolled by the receiving person, never created through the API; no sender on this server yet. */
export const whatsapp: ChannelKindDef = enrolledKind('WhatsApp');
