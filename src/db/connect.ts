import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';
import { preparingPool } from './prepared';

// Timestamps arrive as Date (default); bigint counts (type 20) as numbers,
// which are safe for every count Vigil keeps.
pg.types.setTypeParser(20, (v) => Number(v));
// Dates (type 1082) stay 'YYYY-MM-DD' strings: a calendar day has no time zone.
pg.types.setTypeParser(1082, (v) => v);

/** The database handle every repository takes. */
export type Db = Kysely<Database>;

/** Opens a pooled connection to `url`. */
export function connectDb(url: string, max = 10): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => { /* an idle client died; the pool replaces it */ });
  // A checked-out client's socket error is reported on its query; the listener keeps it from crashing the process.
  pool.on('connect', (client) => { client.on('error', () => undefined); });
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) as unknown as pg.Pool }) }), pool };
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
