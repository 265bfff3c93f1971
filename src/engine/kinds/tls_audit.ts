import { hostname, port, type CheckKind } from './kind';

/** Handshake and chain inspection graded A+ to F (T for untrusted), with findings. */
export const tls_audit: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['host'],
    properties: {
      host: hostname,
      port: { ...port, default: 443 },
      warnDays: { type: 'integer', minimum: 1, maximum: 365, default: 14 },
    },
  },
  sealedFields: [],
  hasPingUrl: false,
};
