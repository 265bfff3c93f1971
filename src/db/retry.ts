/**
 * Transactions that may simply run again: the API's operations run their
 * transactions through `retryingTransactions(db)`, so a transaction that
 * lost a deadlock (40P01) or a serialisation check (40001) is run again, up
 * to TRANSACTION_ATTEMPTS times in all, instead of failing the request.
 * PostgreSQL rolled the loser back whole, so the next attempt starts from a
 * clean slate and meets the state the winner left: a parent the winner
 * deleted is then the callback's own 404.
 *
 * A transaction callback may therefore run more than once. Vigil's keep
 * their effects inside the transaction (side effects are jobs enqueued in it,
 * CONTRIBUTING "Background work"), or make them the last step after the last
 * statement (an invitation's mail), where no deadlock can strike.
 */
import type { Transaction, TransactionBuilder } from 'kysely';
import type { Database } from './schema';
import type { Db } from './connect';

/** Runs of one transaction at most before its failure is answered (409 `conflict_retry`, src/pipeline/dbErrors.ts). */
export const TRANSACTION_ATTEMPTS = 3;

/** True for the failures after which PostgreSQL rolled the transaction back and running it again may succeed. */
export function isTransientConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/** `builder`, whose `execute` runs the callback again after a transient conflict. */
function retrying(builder: TransactionBuilder<Database>): TransactionBuilder<Database> {
  return {
    setAccessMode: (mode) => retrying(builder.setAccessMode(mode)),
    setIsolationLevel: (level) => retrying(builder.setIsolationLevel(level)),
    async execute<T>(callback: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await builder.execute(callback);
        } catch (e) {
          if (attempt >= TRANSACTION_ATTEMPTS || !isTransientConflict(e)) throw e;
          // A short random pause, so that the two sides of a deadlock do not meet again in step.
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
        }
      }
    },
  } as TransactionBuilder<Database>;
}

/**
 * `db` as the API's handlers get it: the same handle in every respect (the
 * same pool, change clock and read cache), except that `transaction()`
 * retries (see above). Methods are bound to `db` itself (Kysely keeps its
 * state in private fields).
 */
export function retryTransactionsOf(db: Db): Db {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction') return () => retrying(target.transaction());
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      let fn = bound.get(prop);
      if (!fn) bound.set(prop, (fn = (value as (...a: unknown[]) => unknown).bind(target)));
      return fn;
    },
  });
}
