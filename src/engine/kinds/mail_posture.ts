import { hostname, type CheckKind } from './kind';

/** DNS posture of a mail domain: MX, SPF, DMARC, DKIM selectors, MTA-STS, TLS-RPT. */
export const mail_posture: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['domain'],
    properties: {
      domain: hostname,
      dkimSelectors: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 63 }, maxItems: 20, default: [] },
      resolver: { type: ['string', 'null'], default: null },
    },
  },
  sealedFields: [],
  hasPingUrl: false,
};
