import { Logger, run, runMigrations, type Runner, type TaskList } from 'graphile-worker';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../db/connect';
import type { Logger as VigilLogger } from '../log';
import { migrateLiveness, startLiveness } from './liveness';

/**
 * The job queue for side effects with retries (alert deliveries, escalation
 * steps): graphile-worker on Vigil's own PostgreSQL. Jobs are added with SQL
 * inside the transaction that decides them, so a crash can neither lose an
 * alert nor send one for a change that rolled back.
 */

function queueLogger(log: VigilLogger): Logger {
  return new Logger(() => (level, message) => {
    if (level === 'error') log.error(`queue: ${message}`);
    else if (level === 'warning') log.warn(`queue: ${message}`);
  });
}

/** Creates or upgrades the queue's own schema (`graphile_worker`) and the heartbeat table of its processes (liveness.ts). */
export async function migrateQueue(pool: pg.Pool, log: VigilLogger): Promise<void> {
  await runMigrations({ pgPool: pool, logger: queueLogger(log) });
  await migrateLiveness(pool);
}

export interface JobOptions { runAt?: Date; maxAttempts?: number; jobKey?: string }

/** Adds a job in the caller's transaction (or as its own statement when `db` is not one). */
export async function enqueue(db: Db, task: string, payload: Record<string, unknown>, o: JobOptions = {}): Promise<void> {
  await sql`select graphile_worker.add_job(${task}, ${JSON.stringify(payload)}::json,
    run_at => ${o.runAt ?? null}::timestamptz, max_attempts => ${o.maxAttempts ?? null}::int, job_key => ${o.jobKey ?? null}::text)`.execute(db);
}

/** Adds one job per payload in a single statement (in the caller's transaction). */
export async function enqueueMany(db: Db, task: string, payloads: Record<string, unknown>[], maxAttempts?: number): Promise<void> {
  if (payloads.length === 0) return;
  await sql`select count(*) from graphile_worker.add_jobs(array(
    select row(${task}, p, null, null, ${maxAttempts ?? null}::int, null, null, null)::graphile_worker.job_spec
    from json_array_elements(${JSON.stringify(payloads)}::json) as p))`.execute(db);
}

/**
 * Runs the queue's tasks in this process until stopped. While it runs the
 * process heartbeats, and frees the jobs of queue processes that died
 * (liveness.ts): their jobs run again within about half a minute. `stop()`
 * lets running jobs finish, hands back the ones fetched but not started, and
 * removes the heartbeat.
 */
export async function startQueue(pool: pg.Pool, tasks: TaskList, log: VigilLogger, concurrency = 24): Promise<Runner> {
  const liveness = startLiveness(pool, log);
  let runner: Runner;
  try {
    runner = await run({
      pgPool: pool, taskList: tasks, concurrency, noHandleSignals: true, pollInterval: 1000, logger: queueLogger(log), events: liveness.events,
      // In a mass outage thousands of deliveries queue at once: jobs are fetched up to 32 per statement and the
      // completions of one tick share a statement. A delivery records its outcome before its job completes, and a
      // delivery already recorded is never sent again, so a crash in between cannot page twice.
      preset: { worker: { localQueue: { size: 32 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    });
  } catch (e) {
    await liveness.stop();
    throw e;
  }
  // A runner that ends by itself (its pool failed) hands its jobs back: it is no longer a live worker.
  void runner.promise.then(() => liveness.stop(), () => liveness.stop());
  return {
    ...runner,
    async stop(reason?: string) {
      try {
        await runner.stop(reason);
      } finally {
        await liveness.stop();
      }
    },
  };
}
