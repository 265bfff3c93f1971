/**
 * One export entity (GET /export/{entity}, a file of GET /export): what it
 * exports and how to read it. Each entity is one file under `entities/`,
 * listed once in `registry.ts`.
 *
 * An entity's query selects its columns under their exported names
 * (camelCase, as the API names fields), filtered to the caller's
 * organisation, workspace confinement and time window, in a stable order. It
 * is run through a server-side cursor (`cursor.ts`), so it may return any
 * number of rows. Only the listed columns ever leave (`format.ts` builds each
 * row from them), so a query may select helper columns for `map` (whether a
 * channel's stored target is already its masked form) that are never written
 * themselves. No entity exports monitor config or anything read from it.
 */
import { sql, type Compilable, type RawBuilder, type SqlBool } from 'kysely';
import type { Permission } from '../auth/roles';
import type { SecretBox } from '../crypto/secrets';
import type { Db } from '../db/connect';

/** Whose rows, and which of their time, an export covers. */
export interface ExportScope {
  organizationId: string;
  /** The caller's workspace confinement; null: every workspace. */
  workspaceIds: readonly string[] | null;
  /** Rows whose own time is at or after `from` (null: from the beginning) and before `to`. */
  from: Date | null;
  to: Date;
}

/** A row as fetched, and as written (keyed by column). */
export type ExportRow = Record<string, unknown>;

/** What a row mapper may use besides the row (the master key's box, for a sealed value whose shown form needs it). */
export interface RowContext { secrets: SecretBox }

/** One exportable entity. */
export interface ExportEntity {
  /** The columns, in file order: the CSV header and the keys of each JSON row. */
  columns: readonly string[];
  /** What the caller needs to read it (plan gates included, as `can` applies them). */
  permission: Permission;
  /** An hourly series: bounded to HOURLY_WINDOW_DAYS a request, the last ones by default. */
  hourly: boolean;
  /** The rows' own time that `from`/`to` bound (documentation: docs/export.md). */
  time: string;
  /** The rows of `scope`, in a stable order. */
  query(db: Db, scope: ExportScope): Compilable;
  /** Turns a fetched row into the exported one (masking what is only ever shown masked, as a channel's target). */
  map?(row: ExportRow, ctx: RowContext): ExportRow;
}

/** `column` in the caller's workspaces (always true when unconfined; false when confined to none). */
export function confined(column: string, scope: ExportScope): RawBuilder<SqlBool> {
  if (scope.workspaceIds === null) return sql<SqlBool>`true`;
  return sql<SqlBool>`${sql.ref(column)} = any(${sql.val([...scope.workspaceIds])}::text[])`;
}

/** `column` (a timestamp) within [from, to). */
export function within(column: string, scope: ExportScope): RawBuilder<SqlBool> {
  const before = sql<SqlBool>`${sql.ref(column)} < ${scope.to}`;
  return scope.from ? sql<SqlBool>`${sql.ref(column)} >= ${scope.from} and ${before}` : before;
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** `column` (an hour bucket) within the window: each hour that overlaps [from, to). */
export function hourWithin(column: string, scope: ExportScope): RawBuilder<SqlBool> {
  const from = scope.from ? new Date(Math.floor(scope.from.getTime() / HOUR) * HOUR) : null;
  return within(column, { ...scope, from });
}

/** `column` (a UTC calendar day, `date`) within the window: each day that overlaps [from, to). */
export function dayWithin(column: string, scope: ExportScope): RawBuilder<SqlBool> {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const last = sql<SqlBool>`${sql.ref(column)} <= ${day(scope.to.getTime() - 1)}::date`;
  return scope.from ? sql<SqlBool>`${sql.ref(column)} >= ${day(Math.floor(scope.from.getTime() / DAY) * DAY)}::date and ${last}` : last;
}

/** A timestamp column as RFC 3339 UTC text with milliseconds (as the API writes them). */
export function isoOf(column: string): RawBuilder<string | null> {
  return sql<string | null>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Pass percentage of a roll-up (3 decimals), null without checks; as v1 computes uptime. */
export function uptimeOf(checks: string, failures: string): RawBuilder<number | null> {
  return sql<number | null>`case when ${sql.ref(checks)} > 0 then round(100.0 * (${sql.ref(checks)} - ${sql.ref(failures)}) / ${sql.ref(checks)}, 3)::float8 end`;
}

/** Mean response time of a roll-up (1 decimal), null without timed checks. */
export function meanOf(sum: string, count: string): RawBuilder<number | null> {
  return sql<number | null>`case when ${sql.ref(count)} > 0 then round(${sql.ref(sum)}::numeric / ${sql.ref(count)}, 1)::float8 end`;
}
