import type { CheckKind } from './kind';

/** Passive: the monitored job pings `{base_url}/ping/<token>`; silence past interval + grace is down. */
export const heartbeat: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { graceSeconds: { type: 'integer', minimum: 0, maximum: 604800, default: 300 } },
  },
  sealedFields: [],
  hasPingUrl: true,
};
