import { hostname, port, readingAssertionsSchema, type CheckKind } from './kind';

/** SNMP v2c/v3 GET of configured OIDs; readings with units; thresholds as assertions. */
export const snmp: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['host', 'oids'],
    properties: {
      host: hostname,
      port: { ...port, default: 161 },
      version: { enum: ['v2c', 'v3'], default: 'v2c' },
      community: { type: 'string', minLength: 1 },
      username: { type: 'string', minLength: 1 },
      securityLevel: { enum: ['noAuthNoPriv', 'authNoPriv', 'authPriv'] },
      authProtocol: { enum: ['SHA', 'SHA-256', 'SHA-512', 'MD5'], default: 'SHA' },
      authPassword: { type: 'string' },
      privProtocol: { enum: ['AES', 'AES-256', 'DES'], default: 'AES' },
      privPassword: { type: 'string' },
      oids: {
        type: 'array', minItems: 1, maxItems: 50,
        items: {
          type: 'object', additionalProperties: false, required: ['oid'],
          properties: { oid: { type: 'string', pattern: '^\\.?[0-9]+(\\.[0-9]+)+$' }, name: { type: 'string' }, unit: { type: 'string' } },
        },
      },
      assertions: readingAssertionsSchema,
    },
  },
  sealedFields: ['community', 'authPassword', 'privPassword'],
  hasPingUrl: false,
};
