import { clockOf, type Db } from '../db/connect';

/** Owners remembered at most per process (an id and a hash: ~100 bytes each). */
const MAX_TOKENS = 200_000;

/**
 * Which owner a token hash belongs to, from memory in the steady state, for
 * ingestion endpoints authenticated by a token (heartbeat URLs in pings.ts,
 * agent reports in agentReport.ts). `table` maps hashes to owners and changes only
 * when a token is made or removed (it carries the `vigil_notify_change`
 * trigger). This process's change clock advances for it on its own writes
 * (cascades included) and on the change feed's NOTIFY for other processes'
 * writes; the whole map is dropped whenever it advances, so a removed token
 * is refused at once, and nothing is remembered while the feed is down.
 * Unknown hashes are not remembered: each costs one indexed lookup.
 */
export class TokenOwners {
  private readonly ids = new Map<string, string>();
  private readonly loading = new Map<string, Promise<string | null>>();
  private stamp: number | null = null;

  constructor(private readonly db: Db, private readonly table: string, private readonly read: (hash: Buffer) => Promise<string | null>) {}

  /** The owner of the token with hash `hash`, or null when none has it. */
  async ownerOf(hash: Buffer): Promise<string | null> {
    const clock = clockOf(this.db);
    const now = clock?.stamp([this.table]) ?? null;
    if (now !== this.stamp) {
      this.ids.clear();
      this.loading.clear();
      this.stamp = now;
    }
    if (now === null) return this.read(hash);
    const key = hash.toString('base64');
    const hit = this.ids.get(key);
    if (hit) return hit;
    let load = this.loading.get(key);
    if (!load) {
      load = this.read(hash).then((id) => {
        if (this.loading.get(key) === load) this.loading.delete(key);
        // Kept only when the table did not change while it was read.
        if (id && clock!.stamp([this.table]) === now && this.stamp === now) {
          if (this.ids.size >= MAX_TOKENS) this.ids.delete(this.ids.keys().next().value!);
          this.ids.set(key, id);
        }
        return id;
      }, (e: unknown) => {
        if (this.loading.get(key) === load) this.loading.delete(key);
        throw e;
      });
      this.loading.set(key, load);
    }
    return load;
  }
}
