import { createHash } from 'node:crypto';
import type pg from 'pg';

/** How many distinct statements one connection keeps prepared before falling back to unnamed ones. */
const MAX_PER_CONNECTION = 500;
const UNPREPARED = /^\s*(begin|commit|rollback|start transaction|savepoint|release|set |create |alter |drop |lock )/i;

type Client = Pick<pg.PoolClient, 'query' | 'release'>;

/**
 * Wraps a pool so that every query Kysely sends runs as a named prepared
 * statement (named by a hash of its text): PostgreSQL then parses and plans a
 * statement once per connection instead of on every request, which is most of
 * its cost for the short queries of the API.
 */
export function preparingPool(pool: pg.Pool): { connect(): Promise<Client>; end(): Promise<void> } {
  const wrappers = new WeakMap<pg.PoolClient, Client>();
  const prepared = new WeakMap<pg.PoolClient, Set<string>>();
  const nameFor = (client: pg.PoolClient, text: string): string | undefined => {
    if (UNPREPARED.test(text)) return undefined;
    const name = `k${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`;
    let names = prepared.get(client);
    if (!names) prepared.set(client, (names = new Set()));
    if (!names.has(name)) {
      if (names.size >= MAX_PER_CONNECTION) return undefined;
      names.add(name);
    }
    return name;
  };
  return {
    async connect() {
      const client = await pool.connect();
      let w = wrappers.get(client);
      if (!w) {
        w = {
          query: ((text: unknown, values?: unknown[]) => {
            if (typeof text !== 'string') return client.query(text as never);
            return client.query({ name: nameFor(client, text), text, values });
          }) as Client['query'],
          release: (err?: Error | boolean) => client.release(err),
        };
        wrappers.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}
