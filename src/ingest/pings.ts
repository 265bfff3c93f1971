/**
 * Heartbeat pings on the ingestion write path (buffer.ts): the request finds
 * the monitor by its token from memory, appends `(monitor, kind, at)` to
 * `heartbeat_pings` by group commit and is answered after the commit; a
 * drain in the worker applies the pings set-wise (engine/ping.ts applyPings)
 * within a few hundred milliseconds.
 */
import { sql } from 'kysely';
import { clockOf, type Db } from '../db/connect';
import { applyPings, pingTokenHash, type AcceptedPing, type PingKind } from '../engine/ping';
import type { Logger } from '../log';
import { bufferWriter, startDrain, type BufferTable, type Drain } from './buffer';

type BufferedPing = Omit<AcceptedPing, 'seq'>;

const PINGS: BufferTable<BufferedPing> = {
  table: 'heartbeat_pings',
  columns: [['monitor_id', 'text'], ['kind', 'text'], ['at', 'timestamptz']],
};

/** Tokens remembered at most per process (a monitor's id and its hash: ~100 bytes each). */
const MAX_TOKENS = 200_000;

/**
 * Which monitor a ping token belongs to, from memory in the steady state.
 *
 * Not `cachedRows` on `monitors`: that table changes many times a second
 * (leases, results, pings themselves), and every change would drop the
 * entries; and the read cache's entries live two seconds, while a job pings
 * once a minute or an hour. Instead the map comes from `heartbeat_tokens`
 * (hash → monitor id), which triggers on `monitors` write only when a
 * heartbeat monitor is created or deleted. This process's change clock
 * (src/db/changes.ts) advances for that table on its own writes (a monitor
 * deleted here reaches it by the cascade) and on the change feed's NOTIFY for
 * other processes' writes; the whole map is dropped whenever it advances
 * (a deleted monitor's URL is 404 at once) and nothing is remembered while
 * the feed is down. Unknown tokens are not remembered: each costs one indexed
 * lookup, as before.
 */
export class PingTokens {
  private readonly ids = new Map<string, string>();
  private readonly loading = new Map<string, Promise<string | null>>();
  private stamp: number | null = null;

  constructor(private readonly db: Db) {}

  /** The monitor id of the token with hash `hash`, or null when none has it. */
  async monitorOf(hash: Buffer): Promise<string | null> {
    const clock = clockOf(this.db);
    const now = clock?.stamp(['heartbeat_tokens']) ?? null;
    if (now !== this.stamp) {
      this.ids.clear();
      this.loading.clear();
      this.stamp = now;
    }
    if (now === null) return this.read(hash);
    const key = hash.toString('base64');
    const hit = this.ids.get(key);
    if (hit) return hit;
    let load = this.loading.get(key);
    if (!load) {
      load = this.read(hash).then((id) => {
        if (this.loading.get(key) === load) this.loading.delete(key);
        // Kept only when the table did not change while it was read.
        if (id && clock!.stamp(['heartbeat_tokens']) === now && this.stamp === now) {
          if (this.ids.size >= MAX_TOKENS) this.ids.delete(this.ids.keys().next().value!);
          this.ids.set(key, id);
        }
        return id;
      }, (e: unknown) => {
        if (this.loading.get(key) === load) this.loading.delete(key);
        throw e;
      });
      this.loading.set(key, load);
    }
    return load;
  }

  private async read(hash: Buffer): Promise<string | null> {
    const row = await this.db.selectFrom('heartbeat_tokens').select('monitor_id').where('hash', '=', hash).executeTakeFirst();
    return row?.monitor_id ?? null;
  }
}

/** The serving side: records pings; `flush` writes what is pending (shutdown). */
export interface PingIngest {
  /**
   * Records a ping of `token` received at `at`; resolves once it is
   * committed (false, with nothing written, for a token no monitor has).
   * `/start` only says the job began: it is answered and not kept.
   */
  record(token: string, kind: PingKind, at?: Date): Promise<boolean>;
  flush(): Promise<void>;
}

const ingests = new WeakMap<Db, PingIngest>();

/** The ping ingestion of `db`, one per database handle (the app's router and the server's fast path share its batches and its token cache). */
export function pingIngestFor(db: Db): PingIngest {
  let p = ingests.get(db);
  if (!p) ingests.set(db, (p = pingIngest(db)));
  return p;
}

export function pingIngest(db: Db): PingIngest {
  const tokens = new PingTokens(db);
  const buffer = bufferWriter(db, PINGS);
  return {
    async record(token, kind, at = new Date()) {
      const hash = pingTokenHash(token);
      const monitorId = hash && await tokens.monitorOf(hash);
      if (!monitorId) return false;
      if (kind !== 'start') await buffer.append([{ monitor_id: monitorId, kind, at }]);
      return true;
    },
    flush: () => buffer.flush(),
  };
}

/** The worker side: applies buffered pings (any number of workers share them). */
export function startPingDrain(db: Db, log: Logger, o: { pollMs?: number; gapMs?: number; batch?: number; concurrency?: number } = {}): Drain {
  const plog = log.child({ component: 'pings' });
  return startDrain<BufferedPing, AcceptedPing>(db, {
    // Only the latest ping of each monitor counts (applyPings): the rest are counted, not sent over.
    summary: sql`select distinct on (monitor_id) seq, monitor_id, kind, at from gone order by monitor_id, at desc, seq desc`,
    // Under load a batch every fifth of a second, so that batches grow rather than multiply (each
    // updates every monitor pinged in it); a ping changes its monitor's status within about a gap
    // and a batch, well within a second. One batch at a time: two would mostly wait for each
    // other's locks on the same monitors.
    name: 'heartbeat_pings', buffer: PINGS, log: plog, gapMs: 200, batch: 10_000, ...o,
    process: (pings) => applyPings(db, pings, (monitorId, e) => plog.error('applying a heartbeat ping', e, { monitorId })),
  });
}
