/**
 * Whether an operation has made any write durable yet: what the runner asks
 * before it repeats an operation that lost a deadlock (src/pipeline/run.ts).
 * Repeating is safe while nothing of the first attempt was committed, since
 * PostgreSQL rolled the failed transaction back whole.
 *
 * Tracked at the pool seam for the statements sent through `db` (Kysely)
 * inside `trackCommits`: a write outside a transaction counts when it
 * returns, a write inside one when its COMMIT returns. Statements sent on the
 * raw pool (the rate limiter's counters) are not seen: spending a rate-limit
 * point twice is harmless.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { tablesWritten } from './changes';

type Client = { query: (...args: never[]) => unknown; release: (err?: Error | boolean) => void };

interface Tracker {
  committed: boolean;
  /** Open transactions of this operation, by connection: whether each wrote yet. */
  open: Map<object, boolean>;
}

const store = new AsyncLocalStorage<Tracker>();
const writes = new Map<string, boolean>();
const MAX_MEMO = 5000;

/** True when `text` may write (memoised per statement text, as the seam's own memo is). */
function writesSomething(text: string): boolean {
  let w = writes.get(text);
  if (w === undefined) {
    const t = tablesWritten(text);
    w = t === 'all' || t.length > 0;
    if (writes.size < MAX_MEMO) writes.set(text, w);
  }
  return w;
}

/** Runs `fn` with its statements watched; `committed()` answers whether any write of it is durable. */
export async function trackCommits<T>(fn: () => Promise<T>): Promise<{ result: T } | { error: unknown; committed: boolean }> {
  const t: Tracker = { committed: false, open: new Map() };
  try {
    return { result: await store.run(t, fn) };
  } catch (error) {
    return { error, committed: t.committed };
  }
}

function observe(t: Tracker, conn: object, text: string, ok: boolean): void {
  if (/^\s*(begin|start transaction)\b/i.test(text)) {
    if (ok) t.open.set(conn, false);
  } else if (/^\s*(commit|end)\b/i.test(text)) {
    if (ok && t.open.get(conn)) t.committed = true;
    t.open.delete(conn);
  } else if (/^\s*(rollback|abort)\b(?!\s+(work\s+|transaction\s+)?to\b)/i.test(text)) {
    t.open.delete(conn);
  } else if (ok && writesSomething(text)) {
    if (t.open.has(conn)) t.open.set(conn, true);
    else t.committed = true;
  }
}

/**
 * Wraps a pool (the seam of src/db/prepared.ts) so that statements sent
 * inside `trackCommits` are observed; outside it the wrapper only forwards.
 */
export function commitTrackingPool<C extends Client>(pool: { connect(): Promise<C>; end(): Promise<void> }): { connect(): Promise<C>; end(): Promise<void> } {
  // One wrapper per connection: Kysely keeps its connection objects by the client it was handed.
  const wrappers = new WeakMap<C, C>();
  return {
    async connect() {
      const client = await pool.connect();
      let w = wrappers.get(client);
      if (!w) {
        const query = client.query.bind(client) as (text: unknown, values?: unknown[]) => unknown;
        w = {
          ...client,
          release: (err?: Error | boolean) => client.release(err),
          query: ((text: unknown, values?: unknown[]) => {
            const t = store.getStore();
            const run = query(text, values);
            if (!t || typeof text !== 'string' || !(run instanceof Promise)) return run;
            return run.then((r) => { observe(t, client, text, true); return r; }, (e: unknown) => { observe(t, client, text, false); throw e; });
          }) as C['query'],
        };
        wrappers.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}
