import type { ChannelKindDef } from './channel';
import { enrolledKind } from './enrolled';

/** `push`: enrolled by the receiving person, never created through the API; no sender on this server yet. */
export const push: ChannelKindDef = enrolledKind('Push');
