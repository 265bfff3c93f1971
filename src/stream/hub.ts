/**
 * One per API process: follows `stream_events` (any process's writes, woken
 * by the change feed's notification and a 1 s tick) and hands each new row
 * to the open streams of this process, which filter it for their caller.
 * Resuming reads the log from PostgreSQL, so a reconnect may land on any
 * process. It also prunes the log beyond the replay window.
 */
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import type { ChangeClock } from '../db/changes';
import { ApiError } from '../pipeline/errors';
import { compare, type Position, type StreamRow } from './events';

/** How long events are kept for a reconnect. */
export const REPLAY_WINDOW_MINUTES = 5;
/** A resume that would replay more than this gets `reset` instead (the client refetches). */
export const REPLAY_MAX = 10_000;
const TICK_MS = 1_000;
const PENDING_RETRY_MS = 100;
const PRUNE_MS = 60_000;

/** What an open stream gives the hub: where to put new rows, and how to end it. */
export interface Subscriber {
  organizationId: string;
  push(rows: readonly StreamRow[]): void;
  end(): void;
}

type RawRow = { tx: string; seq: string; organization_id: string; workspace_id: string | null; type: string; data: Record<string, unknown>; at: string };
const toRow = (r: RawRow): StreamRow => ({
  tx: BigInt(r.tx), seq: BigInt(r.seq), organizationId: r.organization_id, workspaceId: r.workspace_id,
  type: r.type as StreamRow['type'], data: r.data, at: r.at,
});
const AT = sql`to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Rows after `from` and at most `to` (if given), of transactions older than every running one, in order. */
async function readAfter(db: Db, from: Position, to: Position | null, limit: number): Promise<StreamRow[]> {
  const upper = to ? sql`and (tx, seq) <= (${to.tx.toString()}::xid8, ${to.seq.toString()}::bigint)` : sql``;
  const r = await sql<RawRow>`select tx::text as tx, seq::text as seq, organization_id, workspace_id, type, data, ${AT} as at
      from stream_events
     where (tx, seq) > (${from.tx.toString()}::xid8, ${from.seq.toString()}::bigint) ${upper}
       and tx < pg_snapshot_xmin(pg_current_snapshot())
     -- The table's columns, not the text aliases above (text would put 10 before 9).
     order by stream_events.tx, stream_events.seq limit ${limit}`.execute(db);
  return r.rows.map(toRow);
}

export class StreamHub {
  private readonly subs = new Set<Subscriber>();
  private readonly perOrg = new Map<string, number>();
  /** Everything up to here has been handed to the subscribers. */
  private cursor: Position | null = null;
  private polling: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private retry: NodeJS.Timeout | undefined;
  private stopListening: () => void = () => undefined;

  constructor(private readonly db: Db, private readonly opts: { maxPerOrganization: number; log: (msg: string, e: unknown) => void }) {}

  /** Starts following the log from now. */
  async start(clock: ChangeClock | null): Promise<void> {
    const r = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(this.db);
    // Every row of an older transaction is history; any later row sorts after (xmin, 0).
    this.cursor = { tx: BigInt(r.rows[0].xmin), seq: 0n };
    if (clock) this.stopListening = clock.listen((t) => { if (t === 'all' || t.has('stream_events')) this.poll(); });
    this.timers.push(setInterval(() => this.poll(), TICK_MS), setInterval(() => void this.prune(), PRUNE_MS));
    for (const t of this.timers) t.unref();
  }

  /** Where the live stream stands: a new subscriber gets what comes after it. */
  position(): Position {
    if (!this.cursor) throw new ApiError(503, 'stream_unavailable', 'The event stream is not running in this process.');
    return this.cursor;
  }

  /**
   * Registers a stream (429 `too_many_streams` past the organisation's cap in
   * this process; 503 `shutting_down` once shutdown began).
   */
  add(sub: Subscriber): () => void {
    if (this.closed) throw new ApiError(503, 'shutting_down', 'This server is shutting down; reconnect (another server, or this one once restarted, serves the stream).', {}, [], { 'Retry-After': '1' });
    const n = this.perOrg.get(sub.organizationId) ?? 0;
    if (n >= this.opts.maxPerOrganization) {
      throw new ApiError(429, 'too_many_streams', `The organisation has ${n} event streams open on this server, its limit; close one (each tab needs one).`,
        { limit: String(this.opts.maxPerOrganization) }, [], { 'Retry-After': '30' });
    }
    this.perOrg.set(sub.organizationId, n + 1);
    this.subs.add(sub);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.subs.delete(sub);
      const left = (this.perOrg.get(sub.organizationId) ?? 1) - 1;
      if (left > 0) this.perOrg.set(sub.organizationId, left); else this.perOrg.delete(sub.organizationId);
    };
  }

  /**
   * The rows after `from` up to `to`, for a resuming client; null when some
   * of them may have been pruned (or there are too many): the client resets.
   */
  async replay(from: Position, to: Position): Promise<StreamRow[] | null> {
    if (compare(from, to) >= 0) return [];
    const rows = await readAfter(this.db, from, to, REPLAY_MAX + 1);
    // Read the pruned mark after the rows: a prune that ran meanwhile is seen, and the rows are distrusted.
    const p = await sql<{ tx: string; seq: string }>`select tx::text as tx, seq::text as seq from stream_pruned`.execute(this.db);
    const pruned = p.rows[0] ? { tx: BigInt(p.rows[0].tx), seq: BigInt(p.rows[0].seq) } : { tx: 0n, seq: 0n };
    if (compare(from, pruned) < 0 || rows.length > REPLAY_MAX) return null;
    return rows;
  }

  /** Reads what is new (one read at a time; a wake-up during a read asks for one more). */
  poll(): void {
    if (this.closed || !this.cursor) return;
    if (this.polling) { this.again = true; return; }
    this.polling = this.readNew().catch((e) => this.opts.log('event stream: reading the log failed', e)).finally(() => {
      this.polling = null;
      if (this.again) { this.again = false; this.poll(); }
    });
  }

  private async readNew(): Promise<void> {
    for (;;) {
      const rows = await readAfter(this.db, this.cursor!, null, 1000);
      if (rows.length) {
        this.cursor = rows[rows.length - 1];
        for (const s of this.subs) s.push(rows);
      }
      if (rows.length < 1000) break;
    }
    // A row whose transaction is younger than one still running waits for it: look again shortly.
    const pending = await sql<{ p: boolean }>`select exists (select 1 from stream_events
      where tx >= pg_snapshot_xmin(pg_current_snapshot()) and (tx, seq) > (${this.cursor!.tx.toString()}::xid8, ${this.cursor!.seq.toString()}::bigint)) as p`.execute(this.db);
    if (pending.rows[0]?.p && !this.closed) {
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.poll(), PENDING_RETRY_MS);
      this.retry.unref();
    }
  }

  /** Deletes events older than the window and records the newest position deleted. */
  async prune(): Promise<void> {
    try {
      await sql`with gone as (delete from stream_events where at < now() - make_interval(mins => ${REPLAY_WINDOW_MINUTES}) returning tx, seq),
        newest as (select tx, seq from gone order by tx desc, seq desc limit 1)
        update stream_pruned p set tx = newest.tx, seq = newest.seq from newest where (newest.tx, newest.seq) > (p.tx, p.seq)`.execute(this.db);
    } catch (e) {
      this.opts.log('event stream: pruning the log failed', e);
    }
  }

  /** Ends every stream (shutdown: clients reconnect elsewhere) and stops following the log. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopListening();
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.retry);
    for (const s of [...this.subs]) s.end();
    await this.polling;
  }
}
