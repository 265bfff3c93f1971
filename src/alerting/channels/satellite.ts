import type { ChannelKindDef } from './channel';
import { enrolledKind } from './enrolled';

/** `satellite`: enrolled by the receiving person, never created through the API; no sender on this server yet. */
export const satellite: ChannelKindDef = enrolledKind('Satellite');
