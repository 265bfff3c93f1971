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
      timeoutSeconds: { type: 'integer', minimum: 1, maximum: 60, default: 30 },
      followRedirects: { type: 'boolean', default: true },
      assertions: assertionsSchema(['status_code', 'response_time_ms', 'body', 'header', 'json_path', 'tls_days_remaining']),
    },
  },
  sealedFields: ['headers', 'body'],
  hasPingUrl: false,
};
