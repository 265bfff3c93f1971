/**
 * Heartbeat pings on the ingestion write path (buffer.ts): the request finds
 * the monitor by its token from memory, appends `(monitor, kind, at)` to
 * `heartbeat_pings` by group commit and is answered after the commit; a
 * drain in the worker applies the pings set-wise (engine/ping.ts applyPings)
 * within a few hundred milliseconds.
 */
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { applyPings, pingTokenHash, type AcceptedPing, type PingKind } from '../engine/ping';
import type { Logger } from '../log';
import { bufferWriter, startDrain, type BufferTable, type Drain } from './buffer';
import { TokenOwners } from './tokens';

type BufferedPing = Omit<AcceptedPing, 'seq'>;

const PINGS: BufferTable<BufferedPing> = {
  table: 'heartbeat_pings',
  columns: [['monitor_id', 'text'], ['kind', 'text'], ['at', 'timestamptz']],
};

/**
 * Which monitor a ping token belongs to, from memory in the steady state
 * (`TokenOwners`, tokens.ts).
 *
 * Not `cachedRows` on `monitors`: that table changes many times a second
 * (leases, results, pings themselves), and every change would drop the
 * entries; and the read cache's entries live two seconds, while a job pings
 * once a minute or an hour. Instead the map comes from `heartbeat_tokens`
 * (hash → monitor id), which triggers on `monitors` write only when a
 * heartbeat monitor is created or deleted (a deleted monitor's URL is 404 at
 * once).
 */
function pingTokens(db: Db): TokenOwners {
  return new TokenOwners(db, 'heartbeat_tokens', async (hash) => {
    const row = await db.selectFrom('heartbeat_tokens').select('monitor_id').where('hash', '=', hash).executeTakeFirst();
    return row?.monitor_id ?? null;
  });
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
  const tokens = pingTokens(db);
  const buffer = bufferWriter(db, PINGS);
  return {
    async record(token, kind, at = new Date()) {
      const hash = pingTokenHash(token);
      const monitorId = hash && await tokens.ownerOf(hash);
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
