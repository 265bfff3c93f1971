import { assertionsSchema, hostname, port, type CheckKind } from './kind';

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
      community: { type: 'string', default: 'public' },
      user: { type: 'string' },
      authProtocol: { enum: ['md5', 'sha', 'sha256', 'sha512'] },
      authKey: { type: 'string' },
      privProtocol: { enum: ['des', 'aes', 'aes256'] },
      privKey: { type: 'string' },
      oids: {
        type: 'array', minItems: 1, maxItems: 50,
        items: { type: 'object', additionalProperties: false, required: ['oid'], properties: { oid: { type: 'string', pattern: '^\\.?[0-9]+(\\.[0-9]+)+$' }, name: { type: 'string' }, unit: { type: 'string' } } },
      },
      assertions: assertionsSchema(['reading']),
      timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 30, default: 5 },
    },
  },
  sealedFields: ['community', 'authKey', 'privKey'],
  hasPingUrl: false,
};
