import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type pg from 'pg';
import type { Config } from '../config';
import { ApiError } from './errors';
import { metrics } from '../observability/metrics';

/** The rate buckets of the contract (`x-bucket`), and the buckets of public pages (keyed by page and address, not organisation). */
export type Bucket = 'R' | 'W' | 'export' | 'sourcemaps' | 'symbols' | 'page_password' | 'page_subscribe'
  | 'signin_account' | 'signin_address' | 'reset_account' | 'reset_address' | 'signup_address' | 'sentry_project' | 'sentry_org' | 'analytics_site';

/** Spends one point of a bucket for `key` (an organisation, or a page and an address), or throws 429 `rate_limited`. */
export interface RateLimits {
  consume(key: string, bucket: Bucket, points?: number): Promise<void>;
  /** Throws the same 429 when `key` has no point left in `bucket`, spending none (limits that count failures only). */
  check(key: string, bucket: Bucket): Promise<void>;
  close(): Promise<void>;
}

/** Each bucket's window and its points: a configured limit, or a fixed number. */
const WINDOWS: Record<Bucket, { seconds: number; limit: keyof Config['limits'] | number }> = {
  R: { seconds: 60, limit: 'read' },
  W: { seconds: 60, limit: 'write' },
  export: { seconds: 3600, limit: 'export' },
  sourcemaps: { seconds: 3600, limit: 'sourcemaps' },
  symbols: { seconds: 3600, limit: 'symbols' },
  // Password guesses on one status page from one address.
  page_password: { seconds: 60, limit: 5 },
  // Subscriptions to one status page from one address (each may send a confirmation mail).
  page_subscribe: { seconds: 3600, limit: 10 },
  // Sign-in attempts (and wrong current passwords) per e-mail address and per client address.
  signin_account: { seconds: 900, limit: 10 },
  signin_address: { seconds: 900, limit: 30 },
  // Password-reset mails per e-mail address and per client address.
  reset_account: { seconds: 3600, limit: 3 },
  reset_address: { seconds: 3600, limit: 10 },
  // Sign-ups per client address.
  signup_address: { seconds: 3600, limit: 5 },
  // Error events per project per minute, and per organisation per hour (the quota).
  sentry_project: { seconds: 60, limit: 'errorsPerProject' },
  sentry_org: { seconds: 3600, limit: 'errorsPerOrganization' },
  analytics_site: { seconds: 60, limit: 'analyticsPerSite' },
};

/** Buckets counting ingested items (many a second), spent in blocks on shared stores. */
const VOLUME: ReadonlySet<Bucket> = new Set(['sentry_project', 'sentry_org', 'analytics_site']);

/** A block is a hundredth of the window's points (1 to 200): small limits stay exact. */
function blockSize(points: number): number {
  return Math.max(1, Math.min(200, Math.floor(points / 100)));
}

export interface RateLimitStores { pool?: pg.Pool; redis?: unknown }

/**
 * Builds one fixed-window limiter per bucket on the configured store: memory for
 * a single process, PostgreSQL or Redis so that limits hold across processes.
 */
export async function createRateLimits(config: Config, stores: RateLimitStores): Promise<RateLimits> {
  const limiters = {} as Record<Bucket, RateLimiterAbstract>;
  for (const bucket of Object.keys(WINDOWS) as Bucket[]) {
    const { seconds, limit } = WINDOWS[bucket];
    const opts = { keyPrefix: `vigil_${bucket.toLowerCase()}`, points: typeof limit === 'number' ? limit : config.limits[limit], duration: seconds };
    // When the shared store is unreachable, each process limits on its own rather than failing requests.
    const insuranceLimiter = new RateLimiterMemory(opts);
    if (config.rateLimitStore === 'redis') {
      limiters[bucket] = new RateLimiterRedis({ ...opts, storeClient: stores.redis, rejectIfRedisNotReady: true, insuranceLimiter });
    } else if (config.rateLimitStore === 'postgres') {
      if (!stores.pool) throw new Error('the postgres rate-limit store needs a pool');
      limiters[bucket] = await new Promise<RateLimiterPostgres>((resolve, reject) => {
        const l: RateLimiterPostgres = new RateLimiterPostgres(
          { ...opts, storeClient: stores.pool, storeType: 'pool', tableName: 'rate_limits', clearExpiredByTimeout: false, insuranceLimiter },
          (err?: Error) => (err ? reject(err) : resolve(l)),
        );
      });
    } else {
      limiters[bucket] = new RateLimiterMemory(opts);
    }
  }
  const refuse = (bucket: Bucket, msBeforeNext: number) => {
    metrics.rateLimitRefusals.inc({ bucket });
    const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new ApiError(429, 'rate_limited', `Rate limit exceeded; retry in ${retryAfter} seconds.`,
      { bucket, retryAfter: String(retryAfter) }, [], { 'Retry-After': String(retryAfter) });
  };
  const shared = config.rateLimitStore !== 'memory';
  const blocks = new Map<string, { left: number; until: number }>();
  const taking = new Map<string, Promise<void>>();
  /** Spends points on the store itself: a round trip (and, on PostgreSQL, a row lock) each. */
  const spend = async (key: string, bucket: Bucket, points: number) => {
    try {
      return await limiters[bucket].consume(key, points);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      throw refuse(bucket, e.msBeforeNext);
    }
  };
  return {
    async consume(key, bucket, points = 1) {
      const size = shared && VOLUME.has(bucket) ? blockSize(limiters[bucket].points) : 1;
      if (size <= 1) { await spend(key, bucket, points); return; }
      // Ingestion buckets take points from the shared store in blocks and spend them here, so thousands of
      // events a second cost a few store writes instead of one each (and no queue on one hot row). A process
      // can run ahead of the others by at most one block per key.
      const id = `${bucket}\0${key}`;
      for (;;) {
        const b = blocks.get(id);
        if (b && b.until > Date.now() && b.left >= points) { b.left -= points; return; }
        const inFlight = taking.get(id);
        if (inFlight) { await inFlight.catch(() => undefined); continue; }
        const take = (async () => {
          blocks.delete(id);
          const want = Math.max(size, points);
          try {
            const res = await spend(key, bucket, want);
            blocks.set(id, { left: want, until: Date.now() + res.msBeforeNext });
          } catch (e) {
            // Not a whole block left in this window: spend exactly what this call needs (or refuse).
            if (!(e instanceof ApiError) || want === points) throw e;
            await spend(key, bucket, points);
            blocks.set(id, { left: points, until: Date.now() + 1000 });
          }
        })();
        taking.set(id, take);
        try { await take; } finally { taking.delete(id); }
      }
    },
    async check(key, bucket) {
      const res = await limiters[bucket].get(key);
      if (res && res.remainingPoints <= 0) throw refuse(bucket, res.msBeforeNext);
    },
    async close() { /* limiters hold no resources of their own; stores are closed by their owners */ },
  };
}
