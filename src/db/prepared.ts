import { createHash } from 'node:crypto';
import type pg from 'pg';
import { endsTransaction, writesOf, type ChangeClock, type Writes } from './changes';

/** How many distinct statements one connection keeps prepared before falling back to unnamed ones. */
const MAX_PER_CONNECTION = 500;
const UNPREPARED = /^\s*(begin|commit|rollback|start transaction|savepoint|release|set |create |alter |drop |lock )/i;

type Client = Pick<pg.PoolClient, 'query' | 'release'>;

/** What the seam needs to know of a statement: its prepared name, what it writes, whether it ends a transaction. */
interface Statement { name: string | undefined; writes: Writes | 'all'; ends: boolean }

/** Statements by text, worked out once per process (a process sends few distinct statements). */
const statements = new Map<string, Statement>();
const MAX_STATEMENTS = 5000;

function statementOf(text: string): Statement {
  let st = statements.get(text);
  if (!st) {
    st = {
      name: UNPREPARED.test(text) ? undefined : `k${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`,
      writes: writesOf(text),
      ends: endsTransaction(text),
    };
    if (statements.size < MAX_STATEMENTS) statements.set(text, st);
  }
  return st;
}

/**
 * The pool seam every Kysely query goes through. It
 * - runs each statement as a named prepared statement (named by a hash of its
 *   text): PostgreSQL then parses and plans a statement once per connection
 *   instead of on every request, which is most of its cost for the short
 *   queries of the API;
 * - tells `clock` which tables this process writes: when the statement is sent,
 *   when it returns, and when its transaction ends, so that no read cached in
 *   between outlives the write (src/db/readCache.ts).
 */
export function preparingPool(pool: pg.Pool, clock?: ChangeClock): { connect(): Promise<Client>; end(): Promise<void> } {
  const wrappers = new WeakMap<pg.PoolClient, Client>();
  const prepared = new WeakMap<pg.PoolClient, Set<string>>();
  const nameFor = (client: pg.PoolClient, name: string | undefined): string | undefined => {
    if (name === undefined) return undefined;
    let mine = prepared.get(client);
    if (!mine) prepared.set(client, (mine = new Set()));
    if (!mine.has(name)) {
      if (mine.size >= MAX_PER_CONNECTION) return undefined;
      mine.add(name);
    }
    return name;
  };
  return {
    async connect() {
      const client = await pool.connect();
      let w = wrappers.get(client);
      if (!w) {
        // What the open transaction of this connection wrote.
        let dirty: { tables: Set<string>; deleted: Set<string>; updated: Set<string> } | 'all' | null = null;
        const bump = () => {
          if (dirty === 'all') clock!.bump('all');
          else if (dirty) clock!.bump(dirty.tables, dirty.deleted, dirty.updated);
        };
        const settle = () => {
          bump();
          dirty = null;
        };
        w = {
          query: ((text: unknown, values?: unknown[]) => {
            if (typeof text !== 'string') return client.query(text as never);
            const st = statementOf(text);
            const run = client.query({ name: nameFor(client, st.name), text, values });
            if (!clock) return run;
            const { writes, ends } = st;
            if (writes !== 'all' && writes.tables.length === 0 && !ends) return run;
            if (writes === 'all' || dirty === 'all') dirty = 'all';
            else if (writes.tables.length) {
              dirty ??= { tables: new Set(), deleted: new Set(), updated: new Set() };
              for (const t of writes.tables) dirty.tables.add(t);
              for (const t of writes.deleted) dirty.deleted.add(t);
              for (const t of writes.updated) dirty.updated.add(t);
            }
            bump();
            const after = () => {
              bump();
              if (ends) settle();
            };
            return run.then((r) => { after(); return r; }, (e: unknown) => { after(); throw e; });
          }) as Client['query'],
          release: (err?: Error | boolean) => {
            settle();
            client.release(err);
          },
        };
        wrappers.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}
