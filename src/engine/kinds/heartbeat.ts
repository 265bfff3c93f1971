import type { CheckKind } from './kind';

/**
 * Passive: the monitored job pings `{base_url}/ping/<token>`. Silence for longer
 * than the interval plus `graceSeconds` is down (`heartbeat_missed`); a ping to
 * `/fail` is down (`heartbeat_failed`) until the next success ping.
 */
export const heartbeat: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { graceSeconds: { type: 'integer', minimum: 0, maximum: 604800, default: 300 } },
  },
  sealedFields: [],
  hasPingUrl: true,
  async check(config: { graceSeconds?: number }, ctx) {
    const hb = ctx.heartbeat;
    if (!hb) return null;
    const graceMs = (config.graceSeconds ?? 300) * 1000;
    const windowMs = ctx.intervalSeconds * 1000 + graceMs;
    if (hb.lastPingKind === 'fail' && hb.lastPingAt) {
      return { outcome: 'down', cause: 'heartbeat_failed', message: `The job reported a failure at ${hb.lastPingAt.toISOString()}.`, responseTimeMs: null };
    }
    // A monitor that is (re)starting (new, or just unpaused) gets a whole window
    // from that moment; otherwise silence counts from the last ping.
    const fresh = hb.pending && (!hb.lastPingAt || hb.lastPingAt < hb.since);
    const since = fresh || !hb.lastPingAt ? hb.since : hb.lastPingAt;
    if (ctx.now.getTime() - since.getTime() > windowMs) {
      const what = hb.lastPingAt ? `No ping since ${hb.lastPingAt.toISOString()}` : 'No ping received yet';
      return { outcome: 'down', cause: 'heartbeat_missed', message: `${what} (expected every ${ctx.intervalSeconds} s, ${config.graceSeconds ?? 300} s grace).`, responseTimeMs: null };
    }
    if (fresh || !hb.lastPingAt) return null;
    return { outcome: 'up', cause: null, message: `Last ping at ${hb.lastPingAt.toISOString()}.`, responseTimeMs: null };
  },
};
