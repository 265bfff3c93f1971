/**
 * What a database failure means to the client. The domain checks and locks
 * what it writes (so a race with a delete answers its own 404), but a
 * request can still meet a state the domain did not foresee: a parent
 * deleted between its check and the insert, a row gone before a `…OrThrow`
 * read, a deadlock, a database that takes no more connections. None of those
 * is a fault of the server's code, so none may answer 500: this module turns
 * them into the spec's error bodies. (A transaction that lost a deadlock has
 * been run again already, src/db/retry.ts; what reaches here lost every time,
 * or was no transaction of the API's.)
 */
import { NoResultError } from 'kysely';
import { ApiError, notFound } from './errors';
import { isTransientConflict } from '../db/retry';

/** Seconds a client should wait before repeating a request refused for a passing condition. */
export const RETRY_AFTER_SECONDS = 1;
/** Seconds to wait when the database itself is unavailable (out of connections, restarting). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** The SQLSTATE (or Node errno code) of an error, if it carries one. */
function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Records by table, as a 404 names them. */
const RECORDS: Record<string, string> = {
  monitors: 'monitor', workspaces: 'workspace', hosts: 'host', notification_channels: 'channel', error_projects: 'error project',
  error_issues: 'error issue', analytics_sites: 'analytics site', status_pages: 'status page', status_page_components: 'component',
  oncall_schedules: 'on-call schedule', oncall_overrides: 'on-call override', escalation_policies: 'escalation policy',
  memberships: 'member', users: 'person', organizations: 'organisation', incidents: 'incident', agents: 'agent', probes: 'probe',
  api_keys: 'API key', maintenance_windows: 'maintenance window', invitations: 'invitation', sessions: 'session',
  error_symbol_builds: 'symbol build', deliveries: 'delivery',
};

const camel = (column: string) => column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The record a table holds, in words ('record' when unknown). */
function recordOf(table: string | undefined): string {
  return (table && RECORDS[table.replace(/^public\./, '')]) ?? 'record';
}

/**
 * foreign_key_violation (23503). Inserting or updating a row whose parent is
 * gone is a 404 naming the parent, and the field from the key column
 * (`Key (monitor_id)=…` → `monitorId`; the constraint's name when the detail
 * is missing). Deleting a row something still refers to is a 409.
 */
function foreignKey(err: { message?: string; detail?: string; constraint?: string; table?: string }): ApiError {
  const detail = err.detail ?? '';
  if (/still referenced/i.test(detail) || /^update or delete on/i.test(err.message ?? '')) {
    return new ApiError(409, 'still_referenced', 'The record is still in use by another one; remove that first.', { resource: recordOf(err.table) });
  }
  const parent = /not present in table "([^"]+)"/.exec(detail)?.[1];
  let column = /^Key \(([^)]+)\)/.exec(detail)?.[1]?.split(',').map((c) => c.trim()).filter((c) => c !== 'organization_id').pop();
  if (!column && err.constraint && err.table && err.constraint.startsWith(`${err.table}_`) && err.constraint.endsWith('_fkey')) {
    column = err.constraint.slice(err.table.length + 1, -'_fkey'.length);
  }
  const known = recordOf(parent);
  const what = known === 'record' && column ? column.replace(/_id$/, '').replace(/_/g, ' ') : known;
  return notFound(what, column ? camel(column) : undefined);
}

/**
 * unique_violation (23505) that no domain check turned into its own 409
 * (two requests creating the same thing at once): a 409 naming the field
 * from the key's columns, never their values.
 */
function unique(err: { detail?: string }): ApiError {
  const columns = /^Key \(([^)]+)\)/.exec(err.detail ?? '')?.[1]?.split(',').map((c) => c.trim().replace(/^lower\((.*)\)$/, '$1'))
    .filter((c) => c !== 'organization_id' && /^[a-z_]+$/.test(c)) ?? [];
  const field = columns.length ? camel(columns[columns.length - 1]) : undefined;
  return new ApiError(409, 'already_exists', field ? `A record with this ${field} already exists.` : 'The record already exists.',
    field ? { field } : {}, field ? [{ field, reason: 'already taken' }] : []);
}

/** The table a Kysely query node reads or writes first (best effort: for naming a vanished record). */
function tableOfNode(node: unknown): string | undefined {
  const n = node as { kind?: string; from?: { froms?: unknown[] }; table?: unknown; into?: unknown } | undefined;
  const target = n?.from?.froms?.[0] ?? n?.table ?? n?.into;
  const t = target as { kind?: string; node?: unknown; table?: { identifier?: { name?: string } } } | undefined;
  const table = t?.kind === 'AliasNode' ? (t.node as { table?: { identifier?: { name?: string } } })?.table : t?.table;
  return table?.identifier?.name;
}

/** Node and pg-pool failures to reach PostgreSQL at all. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
const POOL_MESSAGES = /^(timeout exceeded when trying to connect|Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Cannot use a pool after calling end on the pool)$/;

/** True when the database cannot serve now: out of connections or resources, restarting, unreachable. */
export function isUnavailable(err: unknown): boolean {
  const code = codeOf(err);
  if (code && (/^(53|08)[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || UNREACHABLE.has(code))) return true;
  return err instanceof Error && POOL_MESSAGES.test(err.message);
}

/** 409 `conflict_retry`: the request met a concurrent change (a deadlock, a serialisation failure) and may be repeated as it is. */
export function conflictRetry(): ApiError {
  return new ApiError(409, 'conflict_retry', 'The request collided with a concurrent change; repeat it.',
    { retryAfter: String(RETRY_AFTER_SECONDS) }, [], { 'Retry-After': String(RETRY_AFTER_SECONDS) });
}

/** 503 `service_unavailable`: the database cannot take the request now; `Retry-After` says when to try again. */
export function serviceUnavailable(): ApiError {
  return new ApiError(503, 'service_unavailable', 'The service is busy or its database is unavailable; retry shortly.',
    { retryAfter: String(UNAVAILABLE_RETRY_AFTER_SECONDS) }, [], { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
}

/**
 * The answer to a database failure, or null when `err` is not one this
 * module knows (the caller then logs it as a fault and answers 500).
 * - 23503 foreign_key_violation → 404 naming the vanished parent (409 on the delete side);
 * - Kysely's NoResultError (a row gone between a check and a read) → 404;
 * - 40P01 / 40001 (not cured by running the transaction again) → 409 `conflict_retry` with Retry-After;
 * - 23505 unique_violation → 409 `already_exists`;
 * - out of connections (53300, pool timeouts), class 53/08, shutting down → 503 with Retry-After.
 */
export function databaseAnswer(err: unknown): ApiError | null {
  if (err instanceof NoResultError) return notFound(recordOf(tableOfNode(err.node)), 'id');
  const code = codeOf(err);
  if (code === '23503') return foreignKey(err as never);
  if (code === '23505') return unique(err as never);
  if (isTransientConflict(err)) return conflictRetry();
  if (isUnavailable(err)) return serviceUnavailable();
  return null;
}
