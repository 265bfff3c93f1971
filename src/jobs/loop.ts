import type { Logger } from '../log';

/** What a background loop runs and how it paces itself. */
export interface LoopOptions {
  /** Its name in logs. */
  name: string;
  /**
   * One round of work on at most `limit` items, oldest first: the number it
   * took (a full round is `limit`), or null when it could not run (another
   * process holds the work). Throwing is logged and retried after `retryMs`
   * with half the limit, down to one item (see `setAside`).
   */
  run(limit: number): Promise<number | null>;
  log: Logger;
  /** Items a round takes at most; a full round is followed at once (Infinity: no limit, never). */
  limit?: number;
  /**
   * Sets the oldest item aside (keeping it, with `error`), when a round of
   * that one item has failed SET_ASIDE_AFTER times: one item that always
   * fails must not block the work behind it forever.
   */
  setAside?(error: string): Promise<void>;
  /**
   * How soon an idle loop looks again (150 ms); each round that finds nothing
   * doubles the wait, up to `idleMaxMs`; work found or `wake()` brings it back.
   */
  pollMs?: number;
  /**
   * The longest wait of an idle loop (2 s, never under `pollMs`): a quiet
   * installation pays a look every few seconds per loop, not several a
   * second. Work appended in this process wakes the loop at once; work
   * appended by another process waits at most this long.
   */
  idleMaxMs?: number;
  /** Least time between the starts of two rounds that were not full (50 ms), so that under load batches grow instead of multiplying. */
  gapMs?: number;
  /** Wait after a failed round (1 s). */
  retryMs?: number;
  /** Rounds in flight at most (1). */
  concurrency?: number;
}

/** Failed rounds of one item before it is set aside. */
export const SET_ASIDE_AFTER = 3;

/** A running loop. */
export interface Loop {
  /** There is new work: the next round starts after the gap instead of the poll. */
  wake(): void;
  /** Ends the loop after the rounds under way. */
  stop(): Promise<void>;
}

/**
 * Runs `run` in the background, the one pacing every drain, the grouper and
 * the traffic judge share: a round at once while rounds come back full;
 * otherwise the next one `gapMs` after the last began when it took anything
 * (or `wake()` was called meanwhile), else every `pollMs`. Up to
 * `concurrency` rounds are in flight, each on its own work: under load a
 * round starts every `gapMs` even while the one before is still writing, so
 * an item waits about one gap plus its own round, not a whole round more.
 */
export function startLoop(o: LoopOptions): Loop {
  const limit = o.limit ?? Infinity;
  const pollMs = o.pollMs ?? 150;
  const gapMs = o.gapMs ?? 50;
  const retryMs = o.retryMs ?? 1000;
  const idleMaxMs = Math.max(pollMs, o.idleMaxMs ?? 2000);
  let idleMs = pollMs;
  const concurrency = Math.max(1, o.concurrency ?? 1);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Infinity;
  const running = new Set<Promise<void>>();
  let woken = false;
  let startWhenFree = false;
  let lastStart = 0;
  // After a failure rounds take half as many items, down to one; each success doubles it again.
  let current = limit;
  let aloneFailures = 0;

  const schedule = (ms: number) => {
    if (stopped) return;
    const at = Date.now() + ms;
    if (timer && at >= dueAt) return;
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(start, ms);
  };
  const afterGap = () => Math.max(0, lastStart + gapMs - Date.now());
  const finished = (n: number | null | 'failed', size: number) => {
    if (n === 'failed') return schedule(retryMs);
    if ((n ?? 0) > 0 || woken) idleMs = pollMs;
    if ((n ?? 0) >= size || startWhenFree) {
      startWhenFree = false;
      schedule(0);
    } else if (woken || (n ?? 0) > 0) schedule(afterGap());
    else if (running.size === 0) {
      schedule(idleMs);
      idleMs = Math.min(idleMs * 2, idleMaxMs);
    }
  };
  function start() {
    timer = undefined;
    dueAt = Infinity;
    if (stopped) return;
    if (running.size >= concurrency) { startWhenFree = true; return; }
    woken = false;
    lastStart = Date.now();
    const size = current;
    const p: Promise<void> = o.run(size).then((n) => {
      // Back up towards the full size, doubling, once rounds succeed again.
      if (size === current) { current = Math.min(limit, size * 2); aloneFailures = 0; }
      return n;
    }, async (e: unknown) => {
      o.log.error(o.name, e);
      if (size === 1 && o.setAside && ++aloneFailures >= SET_ASIDE_AFTER) {
        aloneFailures = 0;
        current = limit;
        const error = e instanceof Error ? e.message : String(e);
        await o.setAside(error).then(() => o.log.error(`${o.name}: an item failed alone ${SET_ASIDE_AFTER} times and was set aside (ingest_rejected)`, undefined, { error }),
          (e2: unknown) => o.log.error(`${o.name}: setting an item aside`, e2));
      } else if (size === current && Number.isFinite(current)) {
        current = Math.max(1, Math.floor(current / 2));
      }
      return 'failed' as const;
    }).then((n) => {
      running.delete(p);
      finished(n, size);
    });
    running.add(p);
    // Another round may follow before this one ends (see above): when woken, or at the next look.
    if (running.size < concurrency) schedule(Math.max(idleMs, gapMs));
  }

  schedule(0);
  return {
    wake() {
      woken = true;
      idleMs = pollMs;
      if (running.size < concurrency) schedule(afterGap());
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}
