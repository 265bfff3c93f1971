/**
 * "Rate limited until": the moment the organisation's limit lets reads
 * through again, as the last 429 said. Observable, so a UI can show a banner
 * with a countdown and hide it once the wait is over (or a call succeeds).
 */
export class RateLimitState {
  #until: number | null = null;
  #bucket: string | null = null;
  #listeners = new Set<() => void>();
  #timer: ReturnType<typeof setTimeout> | null = null;

  /** Epoch milliseconds until which calls are refused, or null when not limited. */
  get until(): number | null { return this.#until; }
  /** The bucket the last 429 named (`R`, `W`, `signin`, …), when it named one. */
  get bucket(): string | null { return this.#bucket; }

  /** Calls `listener` on every change; returns the unsubscribe function (fits React's useSyncExternalStore). */
  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  };

  /** Records a 429 that asked to wait `seconds`. */
  limited(seconds: number, bucket: string | null): void {
    const until = Date.now() + seconds * 1000;
    if (this.#until !== null && this.#until >= until && this.#bucket === bucket) return;
    this.#until = until;
    this.#bucket = bucket;
    if (this.#timer) clearTimeout(this.#timer);
    // Clears itself when the wait is over, even if nothing is called again.
    this.#timer = setTimeout(() => this.clear(), seconds * 1000);
    (this.#timer as { unref?: () => void }).unref?.();
    this.#emit();
  }

  /** A call went through: no longer limited. */
  clear(): void {
    if (this.#timer) { clearTimeout(this.#timer); this.#timer = null; }
    if (this.#until === null) return;
    this.#until = null;
    this.#bucket = null;
    this.#emit();
  }

  #emit(): void { for (const l of this.#listeners) l(); }
}
