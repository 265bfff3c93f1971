/**
 * Which tables have changed, as one counter per table, so that a read cache can
 * tell whether what it holds went stale (src/db/readCache.ts).
 *
 * The clock is fed from two sides:
 * - statements this process sends, seen at the pool seam (src/db/prepared.ts)
 *   before they run, when they return and when their transaction ends, so a
 *   write is visible to the very next read of the same process;
 * - NOTIFYs from statement triggers (migration 0006, src/db/changeFeed.ts) for
 *   writes of other processes (workers, the CLI, other API processes, psql),
 *   which arrive within milliseconds of their commit.
 * While the notification connection is down the clock is not `live`, and
 * nothing may be served from a cache.
 */
export class ChangeClock {
  private readonly gens = new Map<string, number>();
  private everything = 0;
  /** Tables a delete from the key may also change through foreign-key actions (cascade, set null, set default). */
  private onDelete = new Map<string, readonly string[]>();
  /** The same for an update of the key's referenced columns (ON UPDATE actions; Vigil's ids never change, so rarely any). */
  private onUpdate = new Map<string, readonly string[]>();
  /** Tables whose writes by other processes arrive as notifications. */
  private watched = new Set<string>();
  /** True while notifications from other processes are being received. */
  live = false;
  /** Told of every bump (the event stream wakes on `stream_events`); 'all' when anything may have changed. */
  private readonly listeners = new Set<(tables: ReadonlySet<string> | 'all') => void>();

  /** Calls `fn` after every bump; returns the function that stops it. */
  listen(fn: (tables: ReadonlySet<string> | 'all') => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Records that `tables` changed ('all' when unknown), and what the
   * foreign-key actions of rows deleted from `deleted` or updated in
   * `updated` reach. An insert, or an update of a table no ON UPDATE action
   * refers to, changes its own table only: a monitor's check does not make
   * every table under `monitors` stale.
   */
  bump(tables: Iterable<string> | 'all', deleted: Iterable<string> = [], updated: Iterable<string> = []): void {
    if (tables === 'all') {
      this.everything++;
      for (const fn of this.listeners) fn('all');
      return;
    }
    const touched = new Set(tables);
    for (const t of deleted) for (const c of this.onDelete.get(t) ?? []) touched.add(c);
    for (const t of updated) for (const c of this.onUpdate.get(t) ?? []) touched.add(c);
    for (const t of touched) this.gens.set(t, (this.gens.get(t) ?? 0) + 1);
    for (const fn of this.listeners) fn(touched);
  }

  /**
   * A number that changes whenever any of `tables` changes (counters only grow,
   * so their sum does too). Null when reads of `tables` must not be cached now.
   */
  stamp(tables: readonly string[]): number | null {
    if (!this.live) return null;
    let n = this.everything;
    for (const t of tables) {
      if (!this.watched.has(t)) return null;
      n += this.gens.get(t) ?? 0;
    }
    return n;
  }

  /** Installs the foreign-key reach (of deletes and of key updates) and the watched tables (read from the catalog by the change feed). */
  configure(reach: { onDelete: Map<string, readonly string[]>; onUpdate: Map<string, readonly string[]> }, watched: Iterable<string>): void {
    this.onDelete = reach.onDelete;
    this.onUpdate = reach.onUpdate;
    this.watched = new Set(watched);
  }
}

const TARGET = String.raw`("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)(?:\s*\.\s*("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*))?`;
// `for update` / `for no key update` lock rows and `do update` is part of an
// upsert already counted by its `insert into`: none of them names a table.
const WRITE = new RegExp(String.raw`(?<!\bfor\s+(?:no\s+key\s+)?|\bdo\s+)\b(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?)\s+(?:only\s+)?${TARGET}`, 'gi');
const DDL = /^\s*(create|alter|drop|comment|grant|revoke|reindex|cluster|vacuum|copy|do|call)\b/i;
// TRUNCATE names a list, and with CASCADE empties every table that refers to it, whatever its foreign-key actions.
const TRUNCATE = /^\s*truncate\b(.*)$/is;
const NEVER_WRITES = /^\s*(begin|commit|rollback|start transaction|savepoint|release|set |show |listen |unlisten |notify )/i;
const MAYBE_WRITES = /\b(insert|update|delete|merge|truncate)\b/i;

const unquote = (name: string) => (name.startsWith('"') ? name.slice(1, -1).replace(/""/g, '"') : name.toLowerCase());

/** The tables a statement writes, and those it deletes rows from or updates (whose foreign-key actions may reach further). */
export interface Writes { tables: string[]; deleted: string[]; updated: string[] }

/**
 * What a statement writes (see Writes), or 'all' when it cannot tell (DDL,
 * procedure calls, TRUNCATE … CASCADE). MERGE may delete and update.
 */
export function writesOf(text: string): Writes | 'all' {
  const tables = tablesWritten(text);
  if (tables === 'all') return 'all';
  const deleted = new Set<string>();
  const updated = new Set<string>();
  if (tables.length && TRUNCATE.test(text)) tables.forEach((t) => deleted.add(t));
  else if (tables.length) {
    for (const m of text.matchAll(WRITE)) {
      const verb = m[0].trim().split(/\s+/)[0].toLowerCase();
      const [schema, table] = m[2] ? [unquote(m[1]), unquote(m[2])] : ['public', unquote(m[1])];
      const name = schema === 'public' ? table : `${schema}.${table}`;
      if (verb === 'delete' || verb === 'merge') deleted.add(name);
      if (verb === 'update' || verb === 'merge') updated.add(name);
    }
  }
  return { tables, deleted: [...deleted], updated: [...updated] };
}

/**
 * The tables a statement writes: [] for none, 'all' when it cannot tell (DDL,
 * procedure calls). Names are as the catalog prints them (`public.` dropped).
 */
export function tablesWritten(text: string): string[] | 'all' {
  if (NEVER_WRITES.test(text)) return [];
  if (DDL.test(text)) return 'all';
  if (!MAYBE_WRITES.test(text)) return [];
  const truncate = TRUNCATE.exec(text);
  if (truncate) {
    if (/\bcascade\b/i.test(truncate[1])) return 'all';
    const list = truncate[1].replace(/\b(table|only|restart identity|continue identity|restrict)\b/gi, ' ');
    return [...new Set(list.split(',').map((t) => t.trim().replace(/\*$/, '').trim()).filter(Boolean).map((t) => {
      const parts = t.split('.').map((x) => unquote(x.trim()));
      return parts.length === 2 && parts[0] !== 'public' ? `${parts[0]}.${parts[1]}` : parts[parts.length - 1];
    }))];
  }
  const out = new Set<string>();
  for (const m of text.matchAll(WRITE)) {
    const [schema, table] = m[2] ? [unquote(m[1]), unquote(m[2])] : ['public', unquote(m[1])];
    out.add(schema === 'public' ? table : `${schema}.${table}`);
  }
  return [...out];
}

/**
 * True for the statements that end a transaction (its writes become visible to
 * others then); `rollback to savepoint` does not end one.
 */
export function endsTransaction(text: string): boolean {
  return /^\s*(commit|end|abort|rollback(?!\s+(work\s+|transaction\s+)?to\b))\b/i.test(text);
}

/**
 * The foreign-key reach of each table: the tables a write to it may also change
 * (ON DELETE/UPDATE CASCADE, SET NULL, SET DEFAULT), followed transitively.
 */
export function cascadeReach(edges: readonly { parent: string; child: string }[]): Map<string, readonly string[]> {
  const direct = new Map<string, Set<string>>();
  for (const { parent, child } of edges) {
    if (!direct.has(parent)) direct.set(parent, new Set());
    direct.get(parent)!.add(child);
  }
  const out = new Map<string, readonly string[]>();
  for (const start of direct.keys()) {
    const seen = new Set<string>();
    const stack = [...direct.get(start)!];
    while (stack.length) {
      const t = stack.pop()!;
      if (seen.has(t) || t === start) continue;
      seen.add(t);
      stack.push(...(direct.get(t) ?? []));
    }
    out.set(start, [...seen]);
  }
  return out;
}
