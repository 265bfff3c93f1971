import { hostname, type CheckKind } from './kind';

/** A DNS name resolves (to the expected values, when given). */
export const dns: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: hostname,
      recordType: { enum: ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SOA', 'SRV', 'CAA'], default: 'A' },
      expected: { type: 'array', items: { type: 'string' }, default: [] },
      resolver: { type: ['string', 'null'], description: 'host or host:port of the resolver; null = the system resolver', default: null },
      timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 30, default: 5 },
    },
  },
  sealedFields: [],
  hasPingUrl: false,
};
