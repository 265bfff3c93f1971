import { sql } from 'kysely';
import type { Db } from './connect';

/**
 * Runs `work` in a transaction that holds the advisory lock named `name`
 * (until it ends); null, with nothing done, when another transaction holds
 * it. For work one process at a time must do (a drain whose order matters,
 * deletes that could deadlock each other), when the others can just skip.
 */
export function withTryLock<T>(db: Db, name: string, work: (tx: Db) => Promise<T>): Promise<T | null> {
  return db.transaction().execute(async (tx) => {
    const { rows: [lock] } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtext(${name})) as ok`.execute(tx);
    return lock.ok ? work(tx) : null;
  });
}
