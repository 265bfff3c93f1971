import type { Logger } from '../log';

/** What a background loop runs and how it paces itself. */
export interface LoopOptions {
  /** Its name in logs. */
  name: string;
  /**
   * One round of work: the number of items it took (a full round is
   * `limit` or more), or null when it could not run (another process holds
   * the work). Throwing is logged and retried after `retryMs`.
   */
  run(): Promise<number | null>;
  log: Logger;
  /** A round that took this many items is followed at once (Infinity: never). */
  limit?: number;
  /** How often an idle loop looks (150 ms); `wake()` starts it sooner. */
  pollMs?: number;
  /** Least time between the starts of two rounds that were not full (50 ms), so that under load batches grow instead of multiplying. */
  gapMs?: number;
  /** Wait after a failed round (1 s). */
  retryMs?: number;
  /** Rounds in flight at most (1). */
  concurrency?: number;
}

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
  const concurrency = Math.max(1, o.concurrency ?? 1);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = Infinity;
  const running = new Set<Promise<void>>();
  let woken = false;
  let startWhenFree = false;
  let lastStart = 0;

  const schedule = (ms: number) => {
    if (stopped) return;
    const at = Date.now() + ms;
    if (timer && at >= dueAt) return;
    clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(start, ms);
  };
  const afterGap = () => Math.max(0, lastStart + gapMs - Date.now());
  const finished = (n: number | null | 'failed') => {
    if (n === 'failed') return schedule(retryMs);
    if ((n ?? 0) >= limit || startWhenFree) {
      startWhenFree = false;
      schedule(0);
    } else if (woken || (n ?? 0) > 0) schedule(afterGap());
    else if (running.size === 0) schedule(pollMs);
  };
  function start() {
    timer = undefined;
    dueAt = Infinity;
    if (stopped) return;
    if (running.size >= concurrency) { startWhenFree = true; return; }
    woken = false;
    lastStart = Date.now();
    const p: Promise<void> = o.run().then((n) => n, (e: unknown) => {
      o.log.error(o.name, e);
      return 'failed' as const;
    }).then((n) => {
      running.delete(p);
      finished(n);
    });
    running.add(p);
    // Another round may follow before this one ends (see above): when woken, or at the next look.
    if (running.size < concurrency) schedule(Math.max(pollMs, gapMs));
  }

  schedule(0);
  return {
    wake() {
      woken = true;
      if (running.size < concurrency) schedule(afterGap());
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}
