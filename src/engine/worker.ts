import os from 'node:os';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';
import type { Logger } from '../log';
import { claimDue, jobOf, LEASE_RENEW_MARGIN_MS, LEASE_RENEW_MS, nextDue, releaseClaims, renewLeases, WORKER_LEASE_SECONDS, type ClaimedMonitor } from './claim';
import { housekeeping } from './housekeeping';
import type { NetPolicy } from '../net/policy';
import { writeResults, type FinishedCheck } from './results';
import { runCheck } from './runCheck';
import { underMaintenance } from '../alerting/maintenance';
import { metrics } from '../observability/metrics';
import { agentState } from '../repo/agents';

/** The longest an idle scheduler waits before looking for due monitors again: a new monitor is checked within about this. */
const IDLE_MAX_MS = 1000;
/** Results written per transaction, and transactions written at once (see flush). */
const WRITE_BATCH = 200;
const MAX_WRITES = 4;

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
  /**
   * Stops claiming, gives the checks in flight `graceMs` (default 10 s) to
   * finish and writes their results; checks still running then are cut short,
   * their results discarded and their leases released, so another worker
   * runs them at once (none is lost, none is recorded twice).
   */
  stop(graceMs?: number): Promise<void>;
  /** Checks started since the worker began. */
  readonly started: number;
  /** Unix ms of the scheduler's last look for due monitors (null before the first). */
  readonly lastPollAt: number | null;
}

/**
 * Starts a worker: it claims due monitors in batches, runs their checks
 * concurrently under `concurrency`, and writes results in batches (every
 * 100 ms or WRITE_BATCH results, up to MAX_WRITES transactions at once).
 * Housekeeping (partitions, retention) runs every ten minutes.
 */
export function startWorker(o: WorkerOptions): Worker {
  const pollMs = o.pollMs ?? 250;
  const log = o.log.child({ component: 'worker' });
  // Two signals: `stopping` ends claiming; `cutShort` aborts the checks still running when the grace is over.
  const stopping = new AbortController();
  const cutShort = new AbortController();
  const abandoned: string[] = [];
  let lastPollAt: number | null = null;
  let inFlight = 0;
  let started = 0;
  let pending: FinishedCheck[] = [];
  // Monitors this worker holds a claim on (checks in flight, results not yet written), with when the claim
  // runs out (unix ms). Only claims about to run out are renewed: a claim outlives a crashed worker by
  // seconds, never a running check, and a check answered quickly costs no renewal.
  const held = new Map<string, number>();
  let renewing = false;
  // Result writes in progress, and the monitors they are writing.
  const writing = new Set<Promise<void>>();
  const busy = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  // Set while every slot is busy: the first half of the slots freeing up wakes the scheduler
  // at once instead of after a whole poll (otherwise throughput caps near concurrency / poll).
  let atCap = false;
  // How long the scheduler waits after a look that found nothing (see tick).
  let idleMs = pollMs / 2;

  const writeBatch = (batch: FinishedCheck[]) => writeResults(o.db, batch).catch(async (e) => {
    // One result the database refuses must not cost every other monitor its result: one by one, then.
    if (batch.length === 1) return log.error('writing a check result', e, { monitorId: batch[0].monitor.id, kind: batch[0].monitor.kind });
    log.error('writing a batch of check results; retrying them one by one', e);
    for (const one of batch) {
      await writeResults(o.db, [one]).catch((err) => log.error('writing a check result', err, { monitorId: one.monitor.id, kind: one.monitor.kind }));
    }
  });

  /**
   * Starts writing pending results: batches of at most WRITE_BATCH, up to
   * MAX_WRITES transactions at once, so that in a mass outage the first
   * incidents commit (and page) while later ones are still being written. A
   * monitor's results are written in order: one whose earlier result is still
   * being written waits for the next batch.
   */
  const flush = (): Promise<void> => {
    while (pending.length > 0 && writing.size < MAX_WRITES) {
      const batch: FinishedCheck[] = [];
      const taken = new Set<string>();
      const rest: FinishedCheck[] = [];
      for (const r of pending) {
        if (batch.length < WRITE_BATCH && !busy.has(r.monitor.id) && !taken.has(r.monitor.id)) { batch.push(r); taken.add(r.monitor.id); } else rest.push(r);
      }
      if (batch.length === 0) break;
      pending = rest;
      for (const id of taken) busy.add(id);
      const w: Promise<void> = writeBatch(batch).finally(() => {
        writing.delete(w);
        for (const one of batch) { busy.delete(one.monitor.id); held.delete(one.monitor.id); }
        if (pending.length > 0 && (pending.length >= WRITE_BATCH || stopping.signal.aborted)) void flush();
        else if (pending.length > 0) flushSoon();
      });
      writing.add(w);
    }
    return Promise.all([...writing]).then(() => undefined);
  };
  /** Writes everything pending and waits for every write (shutdown). */
  const drainWrites = async () => {
    while (pending.length > 0 || writing.size > 0) await flush();
  };
  // Results are written 100 ms after the first of them waits (or at once by the batch): a timer only
  // while something waits, so an idle worker is not woken ten times a second for nothing.
  let flushTimer: NodeJS.Timeout | undefined;
  function flushSoon(): void {
    flushTimer ??= setTimeout(() => { flushTimer = undefined; void flush(); }, 100);
  }

  const runOne = async (m: ClaimedMonitor) => {
    const at = new Date();
    o.onStart?.(m, at);
    metrics.schedulingLag.observe(Math.max(0, at.getTime() - m.next_due_at.getTime()) / 1000);
    const result = await runCheck(jobOf(m, o.secrets), o.net, cutShort.signal, {
      readAgent: (agentId) => agentState(o.db, { organizationId: m.organization_id, workspaceId: m.workspace_id }, agentId),
    });
    if (cutShort.signal.aborted) {
      // Cut short by shutdown: not a result of the target; another worker runs it again.
      abandoned.push(m.id);
      held.delete(m.id);
      return;
    }
    const seconds = (Date.now() - at.getTime()) / 1000;
    metrics.checkDuration.observe({ kind: m.kind }, seconds);
    if (result) metrics.checks.inc({ kind: m.kind, result: result.outcome });
    log.debug('check', { monitorId: m.id, kind: m.kind, outcome: result?.outcome ?? 'none', durationMs: Math.round(seconds * 1000) });
    const due = nextDue(m, new Date());
    pending.push({ monitor: m, result, at, nextDueAt: due, ...(m.kind === 'heartbeat' ? { judgedPingAt: m.last_ping_at } : {}) });
    if (pending.length >= WRITE_BATCH) void flush();
    else flushSoon();
  };

  const tick = async () => {
    if (stopping.signal.aborted) return;
    let claimed = 0;
    let full = false;
    try {
      // Results waiting to be written beyond what the writes under way can take at once take slots too:
      // when writing falls behind, the worker claims less (and checks at the rate results are stored)
      // instead of holding ever more claims it cannot write.
      const room = o.concurrency - inFlight - Math.max(0, pending.length - WRITE_BATCH * MAX_WRITES);
      // Every slot busy is a look at the work too: the scheduler is alive.
      if (room <= 0) lastPollAt = Date.now();
      if (room > 0) {
        const claimedAt = Date.now();
        const limit = Math.min(room, 500);
        const batch = await claimDue(o.db, limit, null, new Date(claimedAt));
        lastPollAt = Date.now();
        claimed = batch.length;
        full = claimed === limit;
        // A window with keepChecking false: not checked at all (the history shows a gap).
        const quiet = batch.length ? await underMaintenance(o.db, batch.map((m) => m.id), new Date()) : new Map();
        for (const m of batch) {
          held.set(m.id, claimedAt + WORKER_LEASE_SECONDS * 1000);
          if (quiet.get(m.id)?.keepChecking === false) {
            pending.push({ monitor: m, result: null, at: new Date(), nextDueAt: nextDue(m, new Date()) });
            flushSoon();
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
      log.error('claiming due monitors', e);
    }
    // Keep claiming while there is a backlog (a full claim); otherwise look again after a poll, or wait for
    // slots (see atCap). Looks that find nothing wait twice as long each time, up to IDLE_MAX_MS: a quiet
    // installation does not ask PostgreSQL four times a second for work it does not have.
    atCap = inFlight >= o.concurrency;
    idleMs = claimed > 0 ? pollMs : Math.min(idleMs * 2, Math.max(pollMs, IDLE_MAX_MS));
    if (!stopping.signal.aborted) timer = setTimeout(() => void tick(), full && !atCap ? 0 : claimed > 0 ? pollMs : idleMs);
  };

  // One renewal at a time, of the claims about to run out, in one statement that skips rows being written.
  const renewTimer = setInterval(() => {
    if (renewing || held.size === 0) return;
    const now = Date.now();
    const due = [...held].filter(([, until]) => until - now < LEASE_RENEW_MARGIN_MS).map(([id]) => id);
    if (due.length === 0) return;
    renewing = true;
    renewLeases(o.db, due, new Date(now))
      .then(() => { for (const id of due) if (held.has(id)) held.set(id, now + WORKER_LEASE_SECONDS * 1000); })
      .catch((e) => log.error('renewing the claims of running checks', e))
      .finally(() => { renewing = false; });
  }, LEASE_RENEW_MS);
  const house = () => housekeeping(o.db).catch((e) => log.error('housekeeping', e));
  void house();
  const houseTimer = setInterval(() => void house(), 10 * 60_000);
  houseTimer.unref();
  void tick();
  log.info('worker started', { host: os.hostname(), concurrency: o.concurrency });

  const settle = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };
  return {
    get started() { return started; },
    get lastPollAt() { return lastPollAt; },
    async stop(graceMs = 10_000) {
      stopping.abort();
      clearTimeout(timer);
      clearInterval(houseTimer);
      await settle(graceMs);
      cutShort.abort();
      await settle(2000);
      clearTimeout(flushTimer);
      await drainWrites();
      clearInterval(renewTimer);
      if (abandoned.length > 0) {
        await releaseClaims(o.db, abandoned).catch((e) => log.error('releasing the leases of checks cut short', e));
        log.info('released the leases of checks cut short by shutdown', { monitors: abandoned.length });
      }
    },
  };
}
