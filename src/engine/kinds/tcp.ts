import { hostname, port, type CheckKind } from './kind';

/** A TCP connection to host:port opens within the timeout. */
export const tcp: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['host', 'port'],
    properties: { host: hostname, port },
  },
  sealedFields: [],
  hasPingUrl: false,
};
