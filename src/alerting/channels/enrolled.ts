import type { ChannelKindDef } from './channel';
import { invalid } from '../../pipeline/errors';

/**
 * A kind the receiving person enrols themselves (their phone, their device):
 * nobody else may create it through the API, and this server has no sender
 * for it yet, so a delivery says so instead of pretending to succeed.
 */
export function enrolledKind(label: string): ChannelKindDef {
  return {
    creatable: false,
    needsConfirmation: false,
    hasSecret: false,
    parseTarget() {
      throw invalid('kind', `${label} channels are enrolled by the receiving person and cannot be created through the API`);
    },
    async deliver() {
      return { delivered: false, error: 'this channel kind is not available on this server yet', permanent: true };
    },
  };
}
