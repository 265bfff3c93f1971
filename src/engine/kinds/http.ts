import { assertionsSchema, type CheckKind } from './kind';

/** HTTP(S) request with assertions on status, time, body, headers, JSON and certificate. */
export const http: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 },
      method: { enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], default: 'GET' },
      headers: { type: 'object', additionalProperties: { type: 'string' }, default: {} },
      body: { type: ['string', 'null'], maxLength: 65536, default: null },
      timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 60, default: 10 },
      followRedirects: { type: 'boolean', default: true },
      maxRedirects: { type: 'integer', minimum: 0, maximum: 20, default: 5 },
      assertions: assertionsSchema(['status_code', 'response_time_ms', 'body', 'header', 'json_path', 'tls_days_remaining']),
    },
  },
  sealedFields: ['headers', 'body'],
  hasPingUrl: false,
};
