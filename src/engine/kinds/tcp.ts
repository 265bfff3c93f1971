import { hostname, port, type CheckKind } from './kind';

/** A TCP connection to host:port opens within the timeout. */
export const tcp: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['host', 'port'],
    properties: { host: hostname, port, timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 60, default: 10 } },
  },
  sealedFields: [],
  hasPingUrl: false,
};
