import { hostname, type CheckKind } from './kind';

/** A DNS name resolves (to the expected values, when given). */
export const dns: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: hostname,
      recordType: { enum: ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SRV', 'CAA', 'PTR', 'SOA'], default: 'A' },
      expected: { type: 'array', items: { type: 'string' }, default: [] },
      resolver: { type: ['string', 'null'], description: 'IP address of the resolver; null = the service resolvers', default: null },
    },
  },
  sealedFields: [],
  hasPingUrl: false,
};
