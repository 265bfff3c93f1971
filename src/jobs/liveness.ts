import { EventEmitter } from 'node:events';
import os from 'node:os';
import pg from 'pg';
import type { WorkerEvents } from 'graphile-worker';
import type { Logger } from '../log';

/**
 * Liveness of the processes that run the job queue, so that the jobs of one
 * that died are run by another within seconds.
 *
 * graphile-worker locks every job it fetches — those its tasks are running
 * and those waiting in its local queue — with its worker pool's id, and on
 * its own frees the locks of a process that died (SIGKILL, out of memory,
 * power cut) only after four hours. So each process writes a heartbeat row
 * naming its ids (`queue_workers`) every few seconds, and every live process
 * looks for rows whose heartbeat is older than `STALE_SECONDS`: it deletes
 * such a row and frees its jobs with graphile-worker's
 * `force_unlock_workers` in one transaction. Two live processes doing it at
 * once are safe: the delete locks the row, so one of them frees the jobs and
 * the other finds nothing; freeing only ever touches locks held by the dead
 * ids, never a lock a live process took since.
 *
 * A job that was running when its process died runs again (at least once):
 * a delivery then reaches its receiver a second time with the same delivery
 * id (docs/webhooks.md).
 */

/** How often a process writes its heartbeat (and looks for dead ones). */
export const HEARTBEAT_MS = 5000;
/** A process whose heartbeat is older than this is dead: its jobs are freed. */
export const STALE_SECONDS = 20;
/**
 * Locks held by an id no row names (a process that died in the instant
 * between creating its pool and recording it) are freed once this old.
 */
export const UNKNOWN_LOCK_SECONDS = 60;

/**
 * Creates the heartbeat table if missing. Under a transaction-scoped advisory
 * lock: processes starting at once would otherwise race on `create table`.
 */
export async function migrateLiveness(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select pg_advisory_xact_lock(hashtext('vigil.queue_workers'))");
    await client.query(`create table if not exists queue_workers (
      id text primary key,
      worker_ids text[] not null,
      host text not null,
      pid integer not null,
      started_at timestamptz not null default now(),
      heartbeat_at timestamptz not null default now())`);
    await client.query('commit');
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/** This process's part in queue liveness. */
export interface Liveness {
  /** To hand to graphile-worker's `run` (`events`): its pool and workers are recorded as they are created. */
  events: WorkerEvents;
  /** Stops the heartbeat and deletes this process's row; call it once the runner has stopped. Idempotent. */
  stop(): Promise<void>;
}

/** Timings, when not the defaults above. */
export interface LivenessOptions { heartbeatMs?: number; staleSeconds?: number; unknownLockSeconds?: number }

/**
 * Frees the jobs of dead queue processes (see above): deletes the rows whose
 * heartbeat is older than `staleSeconds` and unlocks their ids, together with
 * ids that lock jobs for more than `unknownLockSeconds` without any row
 * naming them; never `ownIds`. Answers the ids freed.
 */
export async function freeDeadWorkers(pool: pg.Pool, ownIds: string[], o: { staleSeconds: number; unknownLockSeconds: number }): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ ids: string[] }>(`with dead as (
        delete from queue_workers where heartbeat_at < now() - make_interval(secs => $1) and id <> all($2::text[])
        returning worker_ids
      ), unknown as (
        select distinct j.locked_by as id from graphile_worker.jobs j
        where j.locked_by is not null and j.locked_at < now() - make_interval(secs => $3) and j.locked_by <> all($2::text[])
          and not exists (select 1 from queue_workers w where j.locked_by = any(w.worker_ids))
      )
      select array(select unnest(worker_ids) from dead union select id from unknown) as ids`, [o.staleSeconds, ownIds, o.unknownLockSeconds]);
    const ids = rows[0].ids;
    if (ids.length > 0) await client.query('select graphile_worker.force_unlock_workers($1::text[])', [ids]);
    await client.query('commit');
    return ids;
  } catch (e) {
    await client.query('rollback').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/**
 * Starts heartbeating for the pool graphile-worker creates with `events`,
 * and freeing the jobs of dead processes, on two connections of its own to
 * the database of `pool`: a busy process (a mass outage's deliveries and
 * checks queueing for the shared pool) must not look dead for want of a
 * connection. The first heartbeat is sent the moment the worker pool exists.
 */
export function startLiveness(pool: pg.Pool, log: Logger, o: LivenessOptions = {}): Liveness {
  // pg keeps the password out of the options' enumerable properties: it is copied by name.
  const own = new pg.Pool({ ...pool.options, password: pool.options.password, max: 2, idleTimeoutMillis: 60_000 });
  own.on('error', () => { /* an idle connection died; the pool replaces it */ });
  own.on('connect', (client) => { client.on('error', () => undefined); });
  // Connected ahead, so that the first heartbeat goes out as soon as graphile-worker has created its pool.
  void own.query('select 1').catch(() => undefined);
  const heartbeatMs = o.heartbeatMs ?? HEARTBEAT_MS;
  const timings = { staleSeconds: o.staleSeconds ?? STALE_SECONDS, unknownLockSeconds: o.unknownLockSeconds ?? UNKNOWN_LOCK_SECONDS };
  const events = new EventEmitter() as WorkerEvents;
  const ids = new Set<string>();
  let poolId: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopping: Promise<void> | null = null;
  // Since when heartbeats have gone through without a failure (null: the last one failed).
  let healthySince: number | null = null;

  const beat = () => own.query(`insert into queue_workers (id, worker_ids, host, pid) values ($1, $2, $3, $4)
      on conflict (id) do update set worker_ids = excluded.worker_ids, heartbeat_at = now()`, [poolId, [...ids], os.hostname(), process.pid]);
  const schedule = () => {
    if (stopping) return;
    // Jitter, so that processes started together do not all reap at once.
    timer = setTimeout(tick, heartbeatMs * (0.8 + Math.random() * 0.4));
    timer.unref();
  };
  const tick = (): Promise<void> => {
    if (running || stopping || !poolId) return running ?? Promise.resolve();
    running = (async () => {
      try {
        await beat();
        healthySince ??= Date.now();
      } catch (e) {
        healthySince = null;
        log.warn('queue: heartbeat failed', { error: e instanceof Error ? e.message : String(e) });
        return;
      }
      // After a database outage everyone's heartbeat is old: others get two beats' time to write theirs
      // before this process takes them for dead.
      if (Date.now() - healthySince < 2 * heartbeatMs) return;
      try {
        const freed = await freeDeadWorkers(own, [...ids], timings);
        if (freed.length > 0) log.warn('queue: freed the jobs of queue workers that stopped heartbeating', { workerIds: freed });
      } catch (e) {
        log.error('queue: freeing the jobs of dead workers', e);
      }
    })().finally(() => { running = null; schedule(); });
    return running;
  };

  events.on('pool:create', ({ workerPool }) => {
    poolId = workerPool.id;
    ids.add(workerPool.id);
    void tick();
  });
  events.on('worker:create', ({ worker }) => { ids.add(worker.workerId); });

  return {
    events,
    stop() {
      stopping ??= (async () => {
        clearTimeout(timer);
        await running;
        if (poolId) await own.query('delete from queue_workers where id = $1', [poolId]).catch((e) => log.warn('queue: removing the heartbeat row', { error: String(e) }));
        await own.end().catch(() => undefined);
      })();
      return stopping;
    },
  };
}
