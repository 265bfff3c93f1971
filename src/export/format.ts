/**
 * Rows into file bytes, batch by batch, as an async iterable of chunks.
 *
 * CSV (`csv-stringify`): a header row of the entity's columns, RFC 4180
 * quoting, CRLF-free `\n` records; null is an empty field, booleans
 * `true`/`false`, lists and objects JSON text. JSON: one array of objects,
 * one row a line, keys in column order, values as they are.
 *
 * Each row is rebuilt from the entity's columns, so a helper column a query
 * selects (for the entity's `map`) never reaches a file.
 */
import { stringify } from 'csv-stringify/sync';
import type { RowCursor } from './cursor';
import type { ExportEntity, ExportRow, RowContext } from './entity';

export type ExportFormat = 'csv' | 'json';

/** A UTF-8 byte order mark (spreadsheets read the file as UTF-8 with it). */
const BOM = '\uFEFF';

/** Content types of the formats. */
export const CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', json: 'application/json; charset=utf-8' };

const CSV_CAST = {
  boolean: (v: boolean) => (v ? 'true' : 'false'),
  date: (v: Date) => v.toISOString(),
  object: (v: object) => JSON.stringify(v),
  number: (v: number) => String(v),
};

/** The exported row of a fetched one: the entity's columns only, mapped, absent ones null. */
function shape(entity: ExportEntity, name: string, row: ExportRow, ctx: RowContext, first: boolean): ExportRow {
  const mapped = entity.map ? entity.map(row, ctx) : row;
  const out: ExportRow = {};
  for (const c of entity.columns) {
    // A query that forgot a column is a programming error, caught by the first row of any test.
    if (first && !(c in mapped)) throw new Error(`export entity ${name}: the query has no column ${c}`);
    out[c] = mapped[c] ?? null;
  }
  return out;
}

/**
 * Rows between full garbage collections during an export. A long export's
 * rows die young, but some outlive a scavenge while their bytes wait for the
 * client, and V8 then lets the old space grow to about four times the live
 * heap before it collects it: a million-row export took the process from
 * 160 to 290 MB (bench:export). A full collection every 50,000 rows (about
 * twenty in a million, some 20 ms each) keeps it near the live size.
 */
const COLLECT_EVERY_ROWS = 50_000;

/** A full collection when the process runs with `--expose-gc` (npm start does); nothing otherwise. */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Counts what an export wrote. */
export interface Tally { rows: number }

/**
 * The file of a cursor's rows in `format`, chunk by chunk (one per batch);
 * the cursor is opened by `open` when the file is first read and closed
 * however the reading ends. `tally` counts the rows as they are written (the
 * manifest of a zip reads it).
 */
export async function* fileChunks(
  entity: ExportEntity, name: string, open: () => Promise<RowCursor>, format: ExportFormat, bom: boolean, ctx: RowContext, tally: Tally,
): AsyncGenerator<Buffer> {
  const columns = [...entity.columns];
  const cursor = await open();
  // One batch into bytes. Only the bytes leave: the rows are garbage before the file waits for the client.
  const render = async (): Promise<Buffer | null> => {
    const batch = await cursor.next();
    if (batch.length === 0) return null;
    const first = tally.rows === 0;
    const rows = batch.map((r, i) => shape(entity, name, r, ctx, first && i === 0));
    tally.rows += rows.length;
    if (format === 'csv') return Buffer.from(stringify(rows, { columns, cast: CSV_CAST }), 'utf8');
    return Buffer.from(rows.map((r, i) => `${first && i === 0 ? '\n' : ',\n'}${JSON.stringify(r)}`).join(''), 'utf8');
  };
  try {
    // The first batch before the first byte: a query that cannot start is still an error answer, not a cut file.
    let chunk = await render();
    if (format === 'csv') yield Buffer.from((bom ? BOM : '') + stringify([], { header: true, columns }), 'utf8');
    else yield Buffer.from('[', 'utf8');
    let collectedAt = 0;
    for (; chunk; chunk = await render()) {
      yield chunk;
      if (tally.rows - collectedAt >= COLLECT_EVERY_ROWS) {
        collectedAt = tally.rows;
        collectGarbage();
      }
    }
    if (format === 'json') yield Buffer.from(tally.rows === 0 ? ']\n' : '\n]\n', 'utf8');
  } finally {
    // Finished, or stopped early (the client went away): the cursor closes.
    await cursor.close();
  }
}
