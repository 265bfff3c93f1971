/**
 * The write path of everything that arrives in volume from outside (heartbeat
 * pings today; error events, analytics events and agent samples can take the
 * same road): an accepted item is appended to a buffer table by group commit
 * (many requests share one INSERT and one commit, each answered only after
 * it), and the slower work runs set-wise behind it, in a drain loop any
 * number of worker processes run side by side.
 *
 * A buffer table has `seq bigint generated always as identity primary key`
 * and the item's columns. The drain takes the oldest rows with `FOR UPDATE
 * SKIP LOCKED` inside a transaction, processes them (on other connections),
 * counts them in `ingest_drained` and only then commits the taking: a worker
 * that dies mid-batch hands its rows back, so the work is done at least once
 * and an acknowledged item is never lost. Processing must therefore tolerate
 * seeing an item twice after a crash.
 */
import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/connect';
import { groupCommit, type GroupCommit } from '../db/groupCommit';
import type { Logger } from '../log';
import { startLoop } from '../jobs/loop';

/** A buffer table and the columns an item fills, each with its PostgreSQL type. */
export interface BufferTable<T> {
  table: string;
  columns: readonly (readonly [keyof T & string, string])[];
  /**
   * How a batch travels: `arrays` (the default), one array parameter per
   * column through `unnest`; `json`, the items as one JSON array read by
   * `json_populate_recordset` (the table's own row type: each item's keys
   * name its columns, a jsonb column takes the value itself, not its text).
   * `json` costs the driver one `JSON.stringify` instead of quoting every
   * element of every array, and the server less too (measured with many
   * text columns); every string must then be well-formed UTF-16 (no lone
   * surrogate: PostgreSQL's JSON refuses its escape).
   */
  encoding?: 'arrays' | 'json';
}

/** The appending side: resolves once the items are committed. */
export interface BufferWriter<T> {
  append(items: T[]): Promise<void>;
  /** Writes what is pending and waits for writes under way (shutdown). */
  flush(): Promise<void>;
}

/** Local listeners of appends, so a drain in the same process starts at once instead of at its next poll. */
const appended = new Map<string, Set<() => void>>();

/** Calls `wake` after every append to `table` in this process; returns the undoing. */
export function onAppend(table: string, wake: () => void): () => void {
  const listeners = appended.get(table) ?? appended.set(table, new Set()).get(table)!;
  listeners.add(wake);
  return () => listeners.delete(wake);
}

export interface BufferWriterOptions {
  /** How long the first item of a batch waits for others (2 ms). */
  delayMs?: number;
  /** Items of one batch at most (2000). */
  maxRows?: number;
  /** Batches committing at once (2). */
  concurrency?: number;
}

/**
 * Appends to `spec.table` by group commit: one `INSERT … SELECT FROM unnest()`
 * (or `json_populate_recordset`, `spec.encoding`) per batch (one statement
 * text, prepared once per connection, whatever the batch size), up to
 * `concurrency` batches committing at once.
 */
export function bufferWriter<T>(db: Db, spec: BufferTable<T>, o: BufferWriterOptions = {}): BufferWriter<T> {
  const cols = sql.join(spec.columns.map(([c]) => sql.ref(c)));
  const table = sql.table(spec.table);
  // The JSON statement is one text with one parameter: compiled once, not per batch.
  const json = spec.encoding === 'json'
    ? sql`insert into ${table} (${cols}) select ${cols} from json_populate_recordset(null::${table}, ${''}::json)`.compile(db).sql
    : null;
  const insert = (items: T[]) => (json !== null
    ? db.executeQuery(CompiledQuery.raw(json, [JSON.stringify(items)]))
    : sql`insert into ${table} (${cols}) select * from unnest(${sql.join(spec.columns.map(([c, type]) => sql`${items.map((i) => i[c])}::${sql.raw(type)}[]`))})`.execute(db));
  const gc: GroupCommit<T> = groupCommit<T>({
    delayMs: o.delayMs ?? 2,
    maxRows: o.maxRows ?? 2000,
    concurrency: o.concurrency ?? 2,
    write: async (items) => {
      await insert(items);
      for (const wake of appended.get(spec.table) ?? []) wake();
    },
  });
  return { append: (items) => gc.add(items), flush: () => gc.flush() };
}

/** How a drain takes and processes a buffer (items of type T, handed to `process` as R). */
export interface DrainOptions<T, R = T & { seq: number }> {
  /** Its name in logs and in `ingest_drained`. */
  name: string;
  buffer: BufferTable<T>;
  /**
   * What `process` gets of the rows taken: SQL selecting from `gone` (the
   * deleted rows: `seq` and the columns), with a `seq` column. By default
   * every row in the order appended; a drain that needs less (the latest row
   * per key, sums) says so here, and fewer rows cross the wire and get parsed.
   */
  summary?: RawBuilder<unknown>;
  /** Does the work of one batch; throwing hands the batch back (retried after `retryMs`). */
  process(items: R[]): Promise<void>;
  log: Logger;
  /** Rows taken at most per batch (2000). */
  batch?: number;
  /** How often an idle drain looks (150 ms); an append in this process wakes it at once. */
  pollMs?: number;
  /** Least time between the starts of two batches that were not full (50 ms), so that under load batches grow instead of multiplying. */
  gapMs?: number;
  /** Batches in flight at most (1). */
  concurrency?: number;
  retryMs?: number;
}

/** A running drain. */
export interface Drain {
  /** Takes and processes one batch now; the number of items (0: the buffer was empty). */
  runOnce(): Promise<number>;
  /** Stops the loop after the batch under way, then drains what is left for up to `finishMs` (1 s). */
  stop(finishMs?: number): Promise<void>;
}

function columnList<T>(b: BufferTable<T>): RawBuilder<unknown> {
  return sql.join(b.columns.map(([c]) => sql.ref(`t.${c}`)));
}

/** Takes the oldest `limit` rows nobody else holds, processes them, counts them, then commits the taking. */
async function drainBatch<T, R>(db: Db, o: DrainOptions<T, R>, limit: number): Promise<number> {
  const table = sql.table(o.buffer.table);
  const summary = o.summary ?? sql`select * from gone order by seq`;
  return db.transaction().execute(async (tx) => {
    // One row at least (the count), with the summary's rows beside it.
    const { rows } = await sql<R & { taken_count: number; seq: number | null }>`with taken as (
        select seq from ${table} order by seq limit ${limit} for update skip locked
      ), gone as (
        delete from ${table} t using taken where t.seq = taken.seq returning t.seq, ${columnList(o.buffer)}
      ) select c.taken_count, s.* from (select count(*)::int as taken_count from gone) c left join lateral (${summary}) s on true`.execute(tx);
    const count = rows[0]?.taken_count ?? 0;
    if (count === 0) return 0;
    const items = rows.filter((r) => r.seq !== null).map(({ taken_count: _c, ...r }) => r as unknown as R);
    await o.process(items);
    await sql`insert into ingest_drained (buffer, items) values (${o.name}, ${count})
      on conflict (buffer) do update set items = ingest_drained.items + excluded.items`.execute(tx);
    return count;
  });
}

/**
 * Moves the oldest row of `table` that nobody holds into `ingest_rejected`
 * (whole, as JSON, with `error`): what a loop does with an item that fails
 * even alone (src/jobs/loop.ts). `where` narrows the rows (SQL on `t`).
 */
export async function setAsideOldest(db: Db, source: string, table: string, error: string, where: RawBuilder<unknown> = sql`true`): Promise<void> {
  const t = sql.table(table);
  await sql`with gone as (
      delete from ${t} where seq = (select t.seq from ${t} t where ${where} order by t.seq limit 1 for update skip locked) returning *
    ) insert into ingest_rejected (source, item, error) select ${source}, row_to_json(gone), ${error.slice(0, 2000)} from gone`.execute(db);
}

/**
 * Runs a drain on the shared loop (src/jobs/loop.ts): a batch at once while
 * batches come back full, the next `gapMs` after a partial one, every
 * `pollMs` when idle; an append in this process wakes it. Up to
 * `concurrency` batches are in flight, each on its own rows.
 */
export function startDrain<T, R = T & { seq: number }>(db: Db, o: DrainOptions<T, R>): Drain {
  const limit = o.batch ?? 2000;
  const loop = startLoop({
    name: `draining ${o.name}`, log: o.log, run: (n) => drainBatch(db, o, n), limit,
    pollMs: o.pollMs, gapMs: o.gapMs, retryMs: o.retryMs, concurrency: o.concurrency,
    setAside: (error) => setAsideOldest(db, o.name, o.buffer.table, error),
  });
  const unlisten = onAppend(o.buffer.table, () => loop.wake());
  return {
    runOnce: () => drainBatch(db, o, limit),
    async stop(finishMs = 1000) {
      unlisten();
      await loop.stop();
      const end = Date.now() + finishMs;
      try {
        while (Date.now() < end && (await drainBatch(db, o, limit)) > 0) { /* what is left, while there is time */ }
      } catch (e) {
        o.log.error(`draining ${o.name} at shutdown (left for the next worker)`, e);
      }
    },
  };
}
