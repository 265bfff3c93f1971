import type { ChangeClock } from './changes';
import { metrics } from '../observability/metrics';

interface Entry { stamp: number; until: number; rows: readonly unknown[] }
interface Loading { stamp: number; promise: Promise<readonly unknown[]> }

/** Limits of one process's read cache. */
export interface ReadCacheOptions {
  /** Longest an entry is served (a backstop: invalidation is by the change clock). */
  ttlMs: number;
  /** Rows held across all entries before the oldest entries go. */
  maxRows: number;
}

const DEFAULTS: ReadCacheOptions = { ttlMs: 2000, maxRows: 20_000 };
/** Keys carry request input (ids, tag filters): longer ones are not worth a slot, and could fill memory. */
const MAX_KEY_LENGTH = 256;
/** What an entry counts against `maxRows`: its rows, and at least one (an empty answer is an entry too). */
const weight = (e: Entry) => Math.max(1, e.rows.length);

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}

/**
 * Rows of hot reads kept in memory until a table they came from changes
 * (src/db/changes.ts). An entry is served only while its tables' stamp is the
 * one it was read under, so a read that raced a write is never kept; loads of
 * one key under one stamp are shared. Rows are frozen: callers build their
 * answers from them and never change them.
 */
export class ReadCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Loading>();
  private rowsHeld = 0;
  private readonly opts: ReadCacheOptions;

  constructor(private readonly clock: ChangeClock, opts: Partial<ReadCacheOptions> = {}) {
    this.opts = { ...DEFAULTS, ...opts };
  }

  /** The rows under `key`, from memory when still fresh, else from `load` (rows of `tables` only). */
  async rows<R>(key: string, tables: readonly string[], load: () => Promise<R[]>): Promise<readonly R[]> {
    const stamp = key.length > MAX_KEY_LENGTH ? null : this.clock.stamp(tables);
    if (stamp === null) return load();
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.stamp === stamp && hit.until > now) {
        metrics.readCacheHits.inc();
        return hit.rows as readonly R[];
      }
      this.drop(key, hit);
    }
    metrics.readCacheMisses.inc();
    const pending = this.loading.get(key);
    if (pending && pending.stamp === stamp) return pending.promise as Promise<readonly R[]>;
    const promise = load().then((rows) => {
      if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
      // Stored only when no write to its tables began or ended while it was read.
      if (this.clock.stamp(tables) === stamp) this.store(key, { stamp, until: Date.now() + this.opts.ttlMs, rows: deepFreeze(rows) });
      return rows;
    }, (e: unknown) => {
      if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
      throw e;
    });
    this.loading.set(key, { stamp, promise });
    return promise;
  }

  /**
   * The rows under `key` when memory holds them fresh, without a promise (a
   * hot path's hit); undefined otherwise, and then `rows` loads them.
   */
  peek<R>(key: string, tables: readonly string[]): readonly R[] | undefined {
    if (key.length > MAX_KEY_LENGTH) return undefined;
    const hit = this.entries.get(key);
    if (!hit || hit.stamp !== this.clock.stamp(tables) || hit.until <= Date.now()) return undefined;
    metrics.readCacheHits.inc();
    return hit.rows as readonly R[];
  }

  private store(key: string, entry: Entry): void {
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    if (weight(entry) > this.opts.maxRows) return;
    this.entries.set(key, entry);
    this.rowsHeld += weight(entry);
    // Oldest first (a Map iterates in insertion order), and expired ones wherever they are met on the way.
    const now = Date.now();
    for (const [k, e] of this.entries) {
      if (this.rowsHeld <= this.opts.maxRows && e.until > now) break;
      this.drop(k, e);
    }
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.rowsHeld -= weight(entry);
  }
}
