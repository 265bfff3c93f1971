import os from 'node:os';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';
import type { Logger } from '../log';
import { claimDue, jobOf, nextDue, type ClaimedMonitor } from './claim';
import { housekeeping } from './housekeeping';
import type { NetPolicy } from './net';
import { writeResults, type FinishedCheck } from './results';
import { runCheck } from './runCheck';
import { underMaintenance } from '../alerting/maintenance';

export interface WorkerOptions {
  db: Db;
  secrets: SecretBox;
  net: NetPolicy;
  log: Logger;
  /** Checks in flight at most. */
  concurrency: number;
  /** How often to look for due work when idle. */
  pollMs?: number;
  /** Called for every check started (benchmarks measure scheduling lag with it). */
  onStart?: (m: ClaimedMonitor, startedAt: Date) => void;
}

/** A running worker: the scheduler loop, the checks in flight and the result writer. */
export interface Worker {
  stop(): Promise<void>;
  /** Checks started since the worker began. */
  readonly started: number;
}

/**
 * Starts a worker: it claims due monitors in batches, runs their checks
 * concurrently under `concurrency`, and writes results in batches (every
 * 100 ms or 200 results). Housekeeping (partitions, retention) runs every
 * ten minutes.
 */
export function startWorker(o: WorkerOptions): Worker {
  const pollMs = o.pollMs ?? 250;
  const stopping = new AbortController();
  let inFlight = 0;
  let started = 0;
  let pending: FinishedCheck[] = [];
  let flushing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  // Set while every slot is busy: the first half of the slots freeing up wakes the scheduler
  // at once instead of after a whole poll (otherwise throughput caps near concurrency / poll).
  let atCap = false;

  const flush = () => {
    if (pending.length === 0) return flushing;
    const batch = pending;
    pending = [];
    flushing = flushing.then(() => writeResults(o.db, batch)).catch(async (e) => {
      // One result the database refuses must not cost every other monitor its result: one by one, then.
      if (batch.length === 1) return o.log.error('writing a check result', e);
      o.log.error('writing a batch of check results; retrying them one by one', e);
      for (const one of batch) await writeResults(o.db, [one]).catch((err) => o.log.error(`writing the check result of ${one.monitor.id}`, err));
    });
    return flushing;
  };
  const flushTimer = setInterval(() => void flush(), 100);

  const runOne = async (m: ClaimedMonitor) => {
    const at = new Date();
    o.onStart?.(m, at);
    const result = await runCheck(jobOf(m, o.secrets), o.net, stopping.signal);
    const due = nextDue(m, new Date());
    pending.push({ monitor: m, result, at, nextDueAt: due, ...(m.kind === 'heartbeat' ? { judgedPingAt: m.last_ping_at } : {}) });
    if (pending.length >= 200) void flush();
  };

  const tick = async () => {
    if (stopping.signal.aborted) return;
    let claimed = 0;
    try {
      const room = o.concurrency - inFlight;
      if (room > 0) {
        const batch = await claimDue(o.db, Math.min(room, 500), null);
        claimed = batch.length;
        // A window with keepChecking false: not checked at all (the history shows a gap).
        const quiet = batch.length ? await underMaintenance(o.db, batch.map((m) => m.id), new Date()) : new Map();
        for (const m of batch) {
          if (quiet.get(m.id)?.keepChecking === false) {
            pending.push({ monitor: m, result: null, at: new Date(), nextDueAt: nextDue(m, new Date()) });
            continue;
          }
          inFlight++;
          started++;
          void runOne(m).finally(() => {
            inFlight--;
            if (atCap && inFlight <= o.concurrency / 2 && !stopping.signal.aborted) {
              atCap = false;
              clearTimeout(timer);
              timer = setTimeout(() => void tick(), 0);
            }
          });
        }
      }
    } catch (e) {
      o.log.error('claiming due monitors', e);
    }
    // Keep claiming while there is a backlog; otherwise poll (or wait for slots, see atCap).
    atCap = inFlight >= o.concurrency;
    if (!stopping.signal.aborted) timer = setTimeout(() => void tick(), claimed > 0 && !atCap ? 0 : pollMs);
  };

  const house = () => housekeeping(o.db).catch((e) => o.log.error('housekeeping', e));
  void house();
  const houseTimer = setInterval(() => void house(), 10 * 60_000);
  houseTimer.unref();
  void tick();
  o.log.info(`worker started on ${os.hostname()} (concurrency ${o.concurrency})`);

  return {
    get started() { return started; },
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      clearInterval(flushTimer);
      clearInterval(houseTimer);
      const deadline = Date.now() + 5000;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await flush();
    },
  };
}
