/**
 * The reads that resolve an API key on every request (src/auth/authenticate.ts):
 * the key with its membership, person, organisation and plan, straight from
 * PostgreSQL, so that a removal, revocation or demotion committed by any
 * process is seen by the next request everywhere.
 *
 * A key already seen is read by id, and the reads of requests that arrive
 * while one is running are gathered into the next: one statement then
 * answers every request that arrived before it was sent (each request still
 * gets a read that started after it did, so none can see the world older
 * than its own arrival), and a process under load pays one round trip per
 * batch instead of one per request.
 */
import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../db/connect';
import { PLAN_COLUMNS } from './plan';

/** Ids of one batch at most (a statement parameter array stays small). */
const MAX_BATCH = 500;

function keyQuery(db: Db) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('memberships as ms', 'ms.id', 'k.membership_id')
    .innerJoin('users as u', 'u.id', 'ms.user_id')
    .innerJoin('organizations as o', 'o.id', 'k.organization_id')
    .innerJoin('plans as p', 'p.code', 'o.plan')
    .select([
      'k.id', 'k.name', 'k.prefix', 'k.token_hash', 'k.scopes', 'k.workspace_ids as key_ws', 'k.expires_at', 'k.revoked_at',
      'k.last_used_at', 'k.organization_id', 'ms.id as membership_id', 'ms.role', 'ms.workspace_ids as member_ws', 'u.id as user_id',
      ...PLAN_COLUMNS,
    ]);
}

/** A key with everything its caller is made of. */
export type KeyRow = Awaited<ReturnType<ReturnType<typeof keyQuery>['execute']>>[number];

// The statements' SQL, built once: building the query costs a third of a read on the API's hottest path.
let byPrefix: string | null = null;
let byIds: string | null = null;

/** The keys whose token starts with `prefix` (the caller compares the hash). */
export async function keysByPrefix(db: Db, prefix: string): Promise<KeyRow[]> {
  byPrefix ??= keyQuery(db).where('k.prefix', '=', '').compile().sql;
  return (await db.executeQuery<KeyRow>(CompiledQuery.raw(byPrefix, [prefix]))).rows;
}

interface Waiter { resolve(row: KeyRow | undefined): void; reject(e: unknown): void }
interface Batches { running: boolean; waiting: Map<string, Waiter[]> }
const batches = new WeakMap<Db, Batches>();

async function drain(db: Db, b: Batches): Promise<void> {
  b.running = true;
  try {
    while (b.waiting.size) {
      const ids = [...b.waiting.keys()].slice(0, MAX_BATCH);
      const batch = new Map(ids.map((id) => [id, b.waiting.get(id)!]));
      for (const id of ids) b.waiting.delete(id);
      try {
        byIds ??= keyQuery(db).where(sql<boolean>`k.id = any(${sql.val([''])}::text[])`).compile().sql;
        const { rows } = await db.executeQuery<KeyRow>(CompiledQuery.raw(byIds, [ids]));
        const found = new Map(rows.map((r) => [r.id, r]));
        for (const [id, waiters] of batch) for (const w of waiters) w.resolve(found.get(id));
      } catch (e) {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(e);
      }
    }
  } finally {
    b.running = false;
  }
}

/**
 * The key `id` as PostgreSQL has it now (undefined when it is gone): read in
 * a statement sent after this call, together with the keys other requests
 * asked for meanwhile.
 */
export function keyById(db: Db, id: string): Promise<KeyRow | undefined> {
  let b = batches.get(db);
  if (!b) batches.set(db, (b = { running: false, waiting: new Map() }));
  const mine = b;
  return new Promise((resolve, reject) => {
    const list = mine.waiting.get(id);
    if (list) list.push({ resolve, reject });
    else mine.waiting.set(id, [{ resolve, reject }]);
    if (!mine.running) void drain(db, mine);
  });
}
