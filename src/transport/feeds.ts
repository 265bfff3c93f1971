import { createHash } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { CompiledQuery } from 'kysely';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db } from '../db/connect';
import { FEED_FILES, FEED_TYPES, feedEntries, feedOrganization, renderFeed, type FeedFormat } from '../domain/feeds';
import { ApiError } from '../pipeline/errors';
import type { AppDeps } from './app';
import { sendBytes, sendError } from './respond';

/** Requests one feed URL may receive per window (spec: Rate limits, "Incident feed URL"). */
export const FEED_LIMIT = 60;
/** The window, in seconds. */
export const FEED_WINDOW = 60;

/** Spends one request of a feed URL's budget, or throws 429 `rate_limited` with Retry-After. */
export interface FeedLimiter {
  consume(key: string): Promise<void>;
}

/**
 * Answers a Kysely connection to rate-limiter-flexible as if it were a pg
 * pool: the feed limit lives in the same `rate_limits` table as the API
 * buckets, on the app's own connections (no second pool to open or close).
 */
function kyselyAsPool(db: Db) {
  return {
    query: async (q: { text: string; values?: unknown[] }) => {
      const r = await db.executeQuery(CompiledQuery.raw(q.text, q.values ?? []));
      return { rows: r.rows, rowCount: r.rows.length };
    },
  };
}

/** A Postgres limiter whose table is made on first use (and retried if that failed). */
function postgresLimiter(db: Db, opts: { keyPrefix: string; points: number; duration: number }): () => Promise<RateLimiterAbstract> {
  let ready: Promise<RateLimiterAbstract> | null = null;
  return () => {
    ready ??= new Promise<RateLimiterAbstract>((resolve, reject) => {
      const l: RateLimiterPostgres = new RateLimiterPostgres(
        { ...opts, storeClient: kyselyAsPool(db), storeType: 'pool', tableName: 'rate_limits', clearExpiredByTimeout: false },
        (err?: Error) => (err ? reject(err) : resolve(l)),
      );
    }).catch((e) => { ready = null; throw e; });
    return ready;
  };
}

/**
 * The per-URL feed limit (60 a minute) on the configured rate-limit store:
 * in memory when the store is `memory` (one process), else in PostgreSQL.
 * The `redis` store also counts in PostgreSQL: the database is shared by
 * every process by construction, so the limit holds across processes all the
 * same, and the app's Redis client is not within reach of the HTTP layer.
 */
export function feedLimiter(deps: AppDeps): FeedLimiter {
  const opts = { keyPrefix: 'vigil_feed', points: FEED_LIMIT, duration: FEED_WINDOW };
  const memory = deps.services.config.rateLimitStore === 'memory' ? new RateLimiterMemory(opts) : null;
  const postgres = memory ? null : postgresLimiter(deps.db, opts);
  return {
    async consume(key) {
      const limiter = memory ?? (await postgres!());
      try {
        await limiter.consume(key, 1);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        const retryAfter = String(Math.max(1, Math.ceil(e.msBeforeNext / 1000)));
        throw new ApiError(429, 'rate_limited', `Rate limit exceeded for this feed URL; retry in ${retryAfter} seconds.`,
          { bucket: 'feed', retryAfter }, [], { 'Retry-After': retryAfter });
      }
    },
  };
}

/** One answer for a malformed, unknown, replaced or revoked token: nothing tells them apart. */
const NO_FEED = () => new ApiError(404, 'not_found', 'No incident feed has this URL.');

/**
 * The incident feeds at `/feeds/incidents/<token>/feed.xml` (RSS 2.0) and
 * `/feeds/incidents/<token>/atom.xml` (Atom), by GET or HEAD. The URL is the
 * credential; the token is looked up on every request, so a replacement or
 * revocation applies from the next one.
 *
 * Rate limit: each URL is counted on its own, literally "60 requests a minute
 * on one URL", so the RSS and Atom URLs of one token have a budget each. The
 * key is a hash of the URL's token and file, never the token itself. Requests
 * are counted before the token is looked up, so an unknown token is limited
 * exactly like a valid one (and 404s and 429s say nothing about validity).
 */
export function feedRouter(deps: AppDeps, log: (msg: string, e: unknown) => void, limiter: FeedLimiter = feedLimiter(deps)): Router {
  const router = express.Router();
  const handle = (format: FeedFormat) => async (req: Request, res: Response) => {
    try {
      const token = String(req.params.token);
      await limiter.consume(createHash('sha256').update(`${FEED_FILES[format]}\n${token}`, 'utf8').digest('base64url'));
      const organizationId = await feedOrganization(deps.db, token);
      if (!organizationId) throw NO_FEED();
      const { organizationName, entries } = await feedEntries(deps.db, organizationId);
      sendBytes(req, res, 200, FEED_TYPES[format], renderFeed(format, deps.services.baseUrl(), organizationId, organizationName, entries));
    } catch (e) {
      sendError(req, res, e, log);
    }
  };
  for (const format of ['rss', 'atom'] as const) router.get(`/incidents/:token/${FEED_FILES[format]}`, handle(format));
  return router;
}
