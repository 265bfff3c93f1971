import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type pg from 'pg';
import type { Config } from '../config';
import { ApiError } from './errors';
import { metrics } from '../observability/metrics';
import type { Logger } from '../log';
import { openLimiterRedis } from './redisStore';

/** The rate buckets of the contract (`x-bucket`), and the buckets of public pages (keyed by page and address, not organisation). */
export type Bucket = 'R' | 'W' | 'export' | 'sourcemaps' | 'symbols' | 'page_password' | 'page_subscribe'
  | 'signin_address' | 'signin_pair' | 'signin_account' | 'signin_backoff' | 'signin_strikes' | 'reset_account' | 'reset_address' | 'link_address'
  | 'signup_address' | 'sentry_project' | 'sentry_org' | 'analytics_site';

/**
 * The rate limits, on the configured store. Every call is one atomic step on
 * the store, so limits hold however many requests run at once: a limit that
 * counts only failures spends its point before the work (a password hash) and
 * gives it back with `refund` when the attempt turns out not to count.
 */
export interface RateLimits {
  /** Spends points of a bucket for `key` (an organisation, or a page and an address), or throws 429 `rate_limited` (the refused points count too). */
  consume(key: string, bucket: Bucket, points?: number): Promise<void>;
  /** Spends one point whatever is left and answers how many the window is now past the limit (0 within it): for ceilings that slow down rather than refuse. */
  spendPast(key: string, bucket: Bucket): Promise<number>;
  /** Gives back `points` spent in the current window (an attempt that did not count). */
  refund(key: string, bucket: Bucket, points?: number): Promise<void>;
  /** Refuses `key` in `bucket` for `seconds` from now (a backoff delay), whatever it had spent. */
  block(key: string, bucket: Bucket, seconds: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Each bucket's window and its points (a configured limit, or a fixed
 * number), and the bucket a refusal names when its own name would tell
 * something about an account (`shownAs`). The one place limits are declared:
 * README's "Password limits" and the contract's descriptions quote these.
 */
const WINDOWS: Record<Bucket, { seconds: number; limit: keyof Config['limits'] | number; shownAs?: string }> = {
  R: { seconds: 60, limit: 'read' },
  W: { seconds: 60, limit: 'write' },
  export: { seconds: 3600, limit: 'export' },
  sourcemaps: { seconds: 3600, limit: 'sourcemaps' },
  symbols: { seconds: 3600, limit: 'symbols' },
  // Password guesses on one status page from one address.
  page_password: { seconds: 60, limit: 5 },
  // Subscriptions to one status page from one address (each may send a confirmation mail).
  page_subscribe: { seconds: 3600, limit: 10 },
  // Wrong passwords (sign-in, and the current password of a change), counted before the hash and given back
  // when right (src/people/sessions.ts `admitAttempt`). Per client address across accounts (password spraying):
  signin_address: { seconds: 900, limit: 30, shownAs: 'signin' },
  // per account from one client address (one guesser; nobody else is held up):
  signin_pair: { seconds: 900, limit: 10, shownAs: 'signin' },
  // per account from every address: a ceiling for guessing spread over many addresses, past which attempts
  // are spaced by signin_backoff instead of refused for the rest of the window (no lock-out by strangers):
  signin_account: { seconds: 3600, limit: 100, shownAs: 'signin' },
  // past that ceiling, one attempt a second at most, and none for 1, 2, 4 … 60 s after each further failure,
  signin_backoff: { seconds: 1, limit: 1, shownAs: 'signin' },
  // the failures past the ceiling (a counter that refuses nothing: the exponent of that delay).
  signin_strikes: { seconds: 3600, limit: 0, shownAs: 'signin' },
  // Password-reset requests per e-mail address and per client address (each may send a mail).
  reset_account: { seconds: 3600, limit: 3 },
  reset_address: { seconds: 3600, limit: 10 },
  // Requests to one-time link pages (invitation, password reset) per client address: tokens cannot be guessed,
  // but each request costs a lookup and an accepted form a password hash.
  link_address: { seconds: 900, limit: 60 },
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

/** What the stores are built on: the PostgreSQL pool (the `postgres` store, and the fallback of `redis`), and the log. */
export interface RateLimitStores { pool?: pg.Pool; log?: Logger }

type LimiterOpts = { keyPrefix: string; points: number; duration: number };

/** A limiter on PostgreSQL's `rate_limits` table (created if missing), insured by `insuranceLimiter`. */
function postgresLimiter(opts: LimiterOpts, pool: pg.Pool, insuranceLimiter: RateLimiterAbstract): Promise<RateLimiterPostgres> {
  return new Promise<RateLimiterPostgres>((resolve, reject) => {
    const l: RateLimiterPostgres = new RateLimiterPostgres(
      { ...opts, storeClient: pool, storeType: 'pool', tableName: 'rate_limits', clearExpiredByTimeout: false, insuranceLimiter },
      (err?: Error) => (err ? reject(err) : resolve(l)),
    );
  });
}

/**
 * Builds one fixed-window limiter per bucket on the configured store: memory for
 * a single process, PostgreSQL or Redis so that limits hold across processes.
 * Redis (REDIS_URL) is insured by PostgreSQL: while Redis is unreachable the
 * counts go to the `rate_limits` table every process shares, so the limits
 * stay the organisation's, not each process's (src/pipeline/redisStore.ts
 * logs each change of state once). Only when PostgreSQL fails as well does a
 * process count in its own memory rather than fail requests.
 */
export async function createRateLimits(config: Config, stores: RateLimitStores): Promise<RateLimits> {
  const limiters = {} as Record<Bucket, RateLimiterAbstract>;
  const redis = config.rateLimitStore === 'redis' ? await openLimiterRedis(config.redisUrl!, stores.log) : null;
  try {
    for (const bucket of Object.keys(WINDOWS) as Bucket[]) {
      const { seconds, limit } = WINDOWS[bucket];
      const opts = { keyPrefix: `vigil_${bucket.toLowerCase()}`, points: typeof limit === 'number' ? limit : config.limits[limit], duration: seconds };
      const memory = new RateLimiterMemory(opts);
      if (redis) {
        const insuranceLimiter = stores.pool ? await postgresLimiter(opts, stores.pool, memory) : memory;
        limiters[bucket] = new RateLimiterRedis({ ...opts, storeClient: redis.client, rejectIfRedisNotReady: true, insuranceLimiter });
      } else if (config.rateLimitStore === 'postgres') {
        if (!stores.pool) throw new Error('the postgres rate-limit store needs a pool');
        limiters[bucket] = await postgresLimiter(opts, stores.pool, memory);
      } else {
        limiters[bucket] = memory;
      }
    }
  } catch (e) {
    await redis?.close();
    throw e;
  }
  const refuse = (bucket: Bucket, msBeforeNext: number) => {
    metrics.rateLimitRefusals.inc({ bucket });
    const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new ApiError(429, 'rate_limited', `Rate limit exceeded; retry in ${retryAfter} seconds.`,
      { bucket: WINDOWS[bucket].shownAs ?? bucket, retryAfter: String(retryAfter) }, [], { 'Retry-After': String(retryAfter) });
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
    async spendPast(key, bucket) {
      // penalty adds without refusing; the answer is the window's count after this point, in one store step.
      const res = await limiters[bucket].penalty(key, 1);
      return Math.max(0, res.consumedPoints - limiters[bucket].points);
    },
    async refund(key, bucket, points = 1) {
      await limiters[bucket].reward(key, points);
    },
    async block(key, bucket, seconds) {
      await limiters[bucket].block(key, seconds);
    },
    async close() {
      // The pool belongs to the server; the Redis client is the limiter's own.
      await redis?.close();
    },
  };
}
