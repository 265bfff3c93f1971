/**
 * Group commit for writes that arrive in volume (error events today;
 * analytics events and pings next): each caller hands over its rows and is
 * answered only once they are committed, but many callers share one INSERT —
 * the first row waits at most `delayMs` for company, a full batch goes at
 * once. A failed statement fails every caller of its batch (nothing is
 * acknowledged that was not stored).
 */
export interface GroupCommitOptions<T> {
  /** Writes one batch (one statement, or one transaction). */
  write(rows: T[]): Promise<void>;
  /** How long the first row of a batch waits for others. */
  delayMs?: number;
  /** A batch this large is written at once. */
  maxRows?: number;
}

export interface GroupCommit<T> {
  /** Resolves once `rows` are committed; rejects if their batch failed. */
  add(rows: T[]): Promise<void>;
  /** Writes what is pending now (shutdown). */
  flush(): Promise<void>;
}

export function groupCommit<T>(o: GroupCommitOptions<T>): GroupCommit<T> {
  const delay = o.delayMs ?? 2;
  const max = o.maxRows ?? 500;
  let pending: { rows: T[]; done: () => void; fail: (e: unknown) => void }[] = [];
  let count = 0;
  let timer: NodeJS.Timeout | null = null;
  let last: Promise<void> = Promise.resolve();

  const flush = () => {
    if (timer) { clearTimeout(timer); timer = null; }
    if (pending.length === 0) return last;
    const batch = pending;
    pending = [];
    count = 0;
    // Batches are written one after another, so a caller's ack never overtakes an earlier batch.
    last = last.then(() => o.write(batch.flatMap((b) => b.rows))).then(
      () => { for (const b of batch) b.done(); },
      (e) => { for (const b of batch) b.fail(e); },
    );
    return last;
  };

  return {
    add(rows) {
      if (rows.length === 0) return Promise.resolve();
      return new Promise<void>((done, fail) => {
        pending.push({ rows, done, fail });
        count += rows.length;
        if (count >= max) void flush();
        else if (!timer) timer = setTimeout(() => void flush(), delay);
      });
    },
    flush: () => flush(),
  };
}
