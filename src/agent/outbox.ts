import type { WireSample } from './wire';

/**
 * Samples not yet delivered, oldest first, at most `capacity`: while the
 * server is away the oldest are dropped to make room, so the agent's memory
 * stays bounded however long the outage.
 */
export class Outbox {
  private items: WireSample[] = [];
  /** Samples dropped for room since the agent started. */
  dropped = 0;

  constructor(readonly capacity: number) {}

  get size(): number { return this.items.length; }

  /** Adds a sample, dropping the oldest when full. */
  push(s: WireSample): void {
    this.items.push(s);
    if (this.items.length > this.capacity) {
      const over = this.items.length - this.capacity;
      this.items.splice(0, over);
      this.dropped += over;
    }
  }

  /** The oldest `n` samples (left in place until `remove`). */
  peek(n: number): WireSample[] {
    return this.items.slice(0, n);
  }

  /** Removes the given samples (delivered, or refused for good), wherever they are now. */
  remove(sent: readonly WireSample[]): void {
    const gone = new Set(sent);
    this.items = this.items.filter((s) => !gone.has(s));
  }
}
