/**
 * Group commit for writes that arrive in volume (error events, heartbeat
 * pings through src/ingest/buffer.ts; analytics events next): each caller
 * hands over its rows and is answered only once they are committed, but many
 * callers share one INSERT — the first row waits at most `delayMs` for
 * company, a full batch goes at once, and while every writer is busy rows
 * gather for the next batch (the wait for a commit is the wait for company,
 * so a slow commit makes batches larger instead of queueing small ones). A
 * failed statement fails every caller of its batch (nothing is acknowledged
 * that was not stored).
 */
export interface GroupCommitOptions<T> {
  /** Writes one batch (one statement, or one transaction). */
  write(rows: T[]): Promise<void>;
  /** How long the first row of a batch waits for others. */
  delayMs?: number;
  /** A batch this large is written at once (and no batch takes more, unless one caller's rows are more). */
  maxRows?: number;
  /**
   * Batches written at once (default 1: one after another, so a caller's ack
   * never overtakes an earlier batch). More lets several commits share the
   * WAL flush where acknowledgement order does not matter.
   */
  concurrency?: number;
}

export interface GroupCommit<T> {
  /** Resolves once `rows` are committed; rejects if their batch failed. */
  add(rows: T[]): Promise<void>;
  /** Writes what is pending now and waits for every write under way (shutdown). */
  flush(): Promise<void>;
}

interface Pending<T> { rows: T[]; done: () => void; fail: (e: unknown) => void }

export function groupCommit<T>(o: GroupCommitOptions<T>): GroupCommit<T> {
  const delay = o.delayMs ?? 2;
  const max = o.maxRows ?? 500;
  const concurrency = Math.max(1, o.concurrency ?? 1);
  let pending: Pending<T>[] = [];
  let count = 0;
  let timer: NodeJS.Timeout | null = null;
  const writing = new Set<Promise<void>>();

  /** Starts one batch of at most `max` rows (at least one caller's). */
  const cut = () => {
    let n = 0;
    let take = 0;
    while (take < pending.length && (take === 0 || n + pending[take].rows.length <= max)) n += pending[take++].rows.length;
    const batch = pending.slice(0, take);
    pending = pending.slice(take);
    count -= n;
    const rows = batch.flatMap((b) => b.rows);
    const w: Promise<void> = (async () => o.write(rows))().then(
      () => { for (const b of batch) b.done(); },
      (e) => { for (const b of batch) b.fail(e); },
    ).finally(() => {
      writing.delete(w);
      // What gathered while this batch was being written goes now: it has waited long enough.
      if (pending.length > 0) start();
    });
    writing.add(w);
  };

  /** Starts batches while a writer is free (the timer is for a first row only). */
  const start = () => {
    if (timer) { clearTimeout(timer); timer = null; }
    while (pending.length > 0 && writing.size < concurrency) cut();
  };

  return {
    add(rows) {
      if (rows.length === 0) return Promise.resolve();
      return new Promise<void>((done, fail) => {
        pending.push({ rows, done, fail });
        count += rows.length;
        if (writing.size >= concurrency) return; // the next free writer takes it
        if (count >= max) start();
        else if (!timer) timer = setTimeout(start, delay);
      });
    },
    async flush() {
      if (timer) { clearTimeout(timer); timer = null; }
      // Everything pending, even over the concurrency: shutdown does not wait its turn.
      while (pending.length > 0) cut();
      while (writing.size > 0) await Promise.all([...writing]);
    },
  };
}
