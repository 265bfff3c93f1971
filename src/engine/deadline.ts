/**
 * The backstop deadline of every check, kept on one coarse timer.
 *
 * Each check used to get `AbortSignal.any([AbortSignal.timeout(70 s), stop])`:
 * a timer, a timeout signal and a composite signal (which Node keeps weakly
 * linked to its sources) per check, thousands a second, each alive for 70 s.
 * Here a check gets one AbortController: a single sweep a second aborts those
 * past their deadline, and one listener per `stop` signal aborts every check
 * started under it. The deadline is only a backstop (each kind has its own,
 * shorter, timeout), so a second of slack is of no account.
 */
const live = new Map<AbortController, { at: number; stop: AbortSignal | undefined }>();
const watched = new WeakSet<AbortSignal>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(): void {
  const now = Date.now();
  for (const [c, d] of live) {
    if (d.at > now) continue;
    live.delete(c);
    c.abort(new DOMException('The check ran past its deadline.', 'TimeoutError'));
  }
  if (live.size === 0) { clearInterval(sweeper); sweeper = undefined; }
}

/** A signal that aborts `ms` from now (within a second) or when `stop` aborts; call `done` when the check ends. */
export function checkDeadline(ms: number, stop?: AbortSignal): { signal: AbortSignal; done(): void } {
  const c = new AbortController();
  if (stop?.aborted) c.abort(stop.reason);
  else {
    live.set(c, { at: Date.now() + ms, stop });
    if (stop && !watched.has(stop)) {
      watched.add(stop);
      stop.addEventListener('abort', () => {
        for (const [other, d] of live) if (d.stop === stop) { live.delete(other); other.abort(stop.reason); }
      }, { once: true });
    }
    if (!sweeper) { sweeper = setInterval(sweep, 1000); sweeper.unref(); }
  }
  return { signal: c.signal, done: () => { live.delete(c); } };
}
