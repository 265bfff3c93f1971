/**
 * Reading an export's rows from PostgreSQL without holding them: a
 * server-side cursor (DECLARE … CURSOR / FETCH) inside one read-only
 * transaction, a batch at a time, only as fast as the batches are consumed.
 * No package needed beyond pg: the statements pass the same pool seam as
 * every other query.
 *
 * One session is one transaction (REPEATABLE READ, so every file of a zip
 * sees the same snapshot) on one pooled connection, opened on the first read
 * and given back by `end()`. A session that is abandoned (the client went
 * away) must still be ended: the transport destroys the stream, whose
 * generator closes its cursor, and the export ends the session.
 */
import { CompiledQuery, sql, type Compilable, type ControlledTransaction } from 'kysely';
import type { Db } from '../db/connect';
import type { Database } from '../db/schema';
import type { ExportRow } from './entity';

/** Rows fetched per round trip: large enough for throughput, small enough to keep memory flat. */
export const BATCH_ROWS = 500;

/**
 * How long the transaction may sit idle (a client that stopped reading):
 * PostgreSQL then ends the session, the next fetch fails and the answer is cut
 * off, so a stalled download cannot hold a connection forever.
 */
const IDLE_LIMIT = '10min';

/** An open cursor: the next batch of rows (empty once there are no more), and closing it. */
export interface RowCursor {
  next(): Promise<ExportRow[]>;
  close(): Promise<void>;
}

/** One export's transaction and its cursors. */
export class ExportSession {
  private opening: Promise<ControlledTransaction<Database>> | null = null;
  private cursors = 0;
  private ended = false;

  constructor(private readonly db: Db) {}

  private open(): Promise<ControlledTransaction<Database>> {
    this.opening ??= (async () => {
      const trx = await this.db.startTransaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute();
      await sql`set local idle_in_transaction_session_timeout = ${sql.lit(IDLE_LIMIT)}`.execute(trx);
      return trx;
    })();
    return this.opening;
  }

  /**
   * Opens a cursor over `query`. Its batches are plain return values, not a
   * generator's: a batch is garbage as soon as its caller has turned it into
   * bytes, never held while the file waits for the client (held rows outlive
   * young-generation collections and grow the heap).
   */
  async cursor(query: Compilable): Promise<RowCursor> {
    if (this.ended) throw new Error('export session already ended');
    const trx = await this.open();
    const name = `vigil_export_${++this.cursors}`;
    const compiled = query.compile();
    await trx.executeQuery(CompiledQuery.raw(`declare ${name} no scroll cursor for ${compiled.sql}`, [...compiled.parameters]));
    let done = false;
    return {
      next: async () => {
        if (done) return [];
        const { rows } = await trx.executeQuery<ExportRow>(CompiledQuery.raw(`fetch forward ${BATCH_ROWS} from ${name}`, []));
        done = rows.length < BATCH_ROWS;
        return rows;
      },
      close: async () => {
        done = true;
        // Ending the transaction closes every cursor anyway; closing early frees the portal for the next file.
        if (!this.ended) await trx.executeQuery(CompiledQuery.raw(`close ${name}`, [])).catch(() => undefined);
      },
    };
  }

  /** Ends the transaction (read only: nothing to commit) and gives the connection back. Idempotent. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const trx = await this.opening?.catch(() => null);
    if (trx && !trx.isCommitted && !trx.isRolledBack) await trx.rollback().execute().catch(() => undefined);
  }
}
