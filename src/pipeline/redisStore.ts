/**
 * The Redis client of the rate limiter (REDIS_URL), and what it says about
 * its connection. The limiter falls back to PostgreSQL while Redis is
 * unreachable (src/pipeline/ratelimit.ts), so limits stay shared; this file
 * makes sure that fallback is heard of once per change of state — not once
 * per failed reconnection, and never as ioredis's "Unhandled error event".
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log';

/** How long one limiter command may wait on Redis before the fallback store answers instead (a hung server, a dropped route). */
const COMMAND_TIMEOUT_MS = 1000;

/** A Redis client the limiter owns: `close` stops its reconnecting for good. */
export interface LimiterRedis {
  client: Redis;
  close(): Promise<void>;
}

/** The error's words without the URL (which may carry a password). */
function reason(e: unknown): string {
  const err = e as { code?: string; message?: string } | null;
  return String(err?.code ?? err?.message ?? e).slice(0, 200);
}

/**
 * Connects to `url` in the background (commands never queue: while the
 * connection is not ready they fail at once, and the limiter's insurance
 * store answers). Logs `warn` when Redis becomes unreachable (also when it is
 * unreachable from the start) and `info` when it is back: one line per change
 * of state, however many reconnection attempts fail in between.
 */
export async function openLimiterRedis(url: string, log?: Logger): Promise<LimiterRedis> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { enableOfflineQueue: false, lazyConnect: false, commandTimeout: COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 1 });
  let state: 'starting' | 'up' | 'down' = 'starting';
  let closing = false;
  const down = (e?: unknown) => {
    if (closing || state === 'down') return;
    state = 'down';
    log?.warn('rate limits: Redis is unreachable; counting in PostgreSQL, shared by every process, until it is back', e === undefined ? {} : { reason: reason(e) });
  };
  // Every failed (re)connection emits 'error'; without a listener ioredis prints each one as unhandled.
  client.on('error', (e) => down(e));
  client.on('close', () => { if (state === 'up') down(); });
  client.on('ready', () => {
    if (state === 'down') log?.info('rate limits: Redis is reachable again; counting in Redis');
    state = 'up';
  });
  return {
    client,
    async close() {
      closing = true;
      await client.quit().catch(() => undefined);
      client.disconnect();
    },
  };
}
