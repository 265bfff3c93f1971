import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';
import { preparingPool } from './prepared';
import { ChangeClock } from './changes';
import { ReadCache } from './readCache';
import { retryTransactionsOf } from './retry';

// Timestamps arrive as Date (default); bigint counts (type 20) as numbers,
// which are safe for every count Vigil keeps.
pg.types.setTypeParser(20, (v) => Number(v));
// Dates (type 1082) stay 'YYYY-MM-DD' strings: a calendar day has no time zone.
pg.types.setTypeParser(1082, (v) => v);

/** The database handle every repository takes. */
export type Db = Kysely<Database>;

const caches = new WeakMap<object, ReadCache>();
const clocks = new WeakMap<object, ChangeClock>();

/**
 * How long a statement waits for a connection of the pool (all busy, or
 * PostgreSQL slow to accept one) before it fails; the API answers that
 * failure 503 with Retry-After (src/pipeline/dbErrors.ts) instead of holding
 * the request for ever.
 */
export const ACQUIRE_TIMEOUT_MS = 30_000;

/**
 * Opens a pooled connection to `url`. Its change clock learns of every write
 * made through `db`; the read cache serves nothing until a change feed makes
 * the clock live (src/db/changeFeed.ts), so processes without one never cache.
 */
export function connectDb(url: string, max = 10, acquireTimeoutMs = ACQUIRE_TIMEOUT_MS): { db: Db; pool: pg.Pool; clock: ChangeClock } {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: acquireTimeoutMs });
  pool.on('error', () => { /* an idle client died; the pool replaces it */ });
  // A checked-out client's socket error is reported on its query; the listener keeps it from crashing the process.
  pool.on('connect', (client) => { client.on('error', () => undefined); });
  const clock = new ChangeClock();
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, clock) as unknown as pg.Pool }) });
  caches.set(db, new ReadCache(clock));
  clocks.set(db, clock);
  return { db, pool, clock };
}

/**
 * Rows of a hot read through the read cache of `db` (see ReadCache). Inside a
 * transaction (`db` is then not the root handle) it always reads, so a
 * transaction sees its own writes.
 */
export function cachedRows<R>(db: Db, key: string, tables: readonly string[], load: () => Promise<R[]>): Promise<readonly R[]> {
  const cache = caches.get(db);
  return cache ? cache.rows(key, tables, load) : load();
}

/** What `cachedRows` would answer from memory now, without a promise; undefined when it would have to load. */
export function peekCachedRows<R>(db: Db, key: string, tables: readonly string[]): readonly R[] | undefined {
  return caches.get(db)?.peek<R>(key, tables);
}

const retrying = new WeakMap<Db, Db>();

/**
 * The root `db` whose transactions run again after a deadlock or a
 * serialisation failure (src/db/retry.ts), for the API's operations: one
 * handle per root, sharing its read cache and change clock.
 */
export function withTransactionRetries(db: Db): Db {
  let view = retrying.get(db);
  if (!view) {
    view = retryTransactionsOf(db);
    const cache = caches.get(db);
    const clock = clocks.get(db);
    if (cache) caches.set(view, cache);
    if (clock) clocks.set(view, clock);
    retrying.set(db, view);
  }
  return view;
}

/** The change clock of a root `db` (null for a transaction or a handle not made by connectDb): for caches of their own. */
export function clockOf(db: Db): ChangeClock | null {
  return clocks.get(db) ?? null;
}

/** Creates `database` on the server at `adminUrl` if it does not exist yet. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) await client.query(`create database "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}
