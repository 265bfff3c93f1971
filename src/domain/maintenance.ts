/**
 * Maintenance windows: GET/POST/DELETE /maintenance. A window belongs to one
 * workspace and covers monitors of that workspace; a recurring window is one
 * record. When a window is in force is decided in src/alerting/maintenance.ts.
 *
 * Visibility: a window is visible when its workspace is (organisation and
 * key confinement); an invisible window answers 404 like a missing one.
 */
import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { IANAZone } from 'luxon';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import type { MaintenanceWindowsTable } from '../db/schema';
import { newId } from '../crypto/ids';
import { invalid, notFound } from '../pipeline/errors';
import { lastOccurrence, nextOccurrence, type WindowTiming } from '../alerting/maintenance';
import { audit, diff } from './audit';
import { queueMaintenanceNews } from '../statuspages/news';
import { iso, visibleWorkspace, workspaceFilter } from './tenancy';

type Row = Selectable<MaintenanceWindowsTable>;

const AUDITED = ['title', 'description', 'workspaceId', 'monitorIds', 'startsAt', 'endsAt', 'timezone', 'recurrenceRule',
  'keepChecking', 'showOnStatusPage', 'notifySubscribers'];

/** RFC 3339 date-time with a mandatory offset (`Z` or `±hh:mm`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** The fields of a row that decide when it is in force. */
export function timingOf(r: Row): WindowTiming {
  return { startsAt: r.starts_at, endsAt: r.ends_at, timezone: r.timezone, recurrenceRule: r.recurrence_rule };
}

/** The API shape of a window at `now`: `nextOccurrence` is the one in progress, else the next; `active` while one is in progress. */
export function windowOut(r: Row, now: Date) {
  const next = nextOccurrence(timingOf(r), now);
  return {
    id: r.id, title: r.title, description: r.description,
    startsAt: iso(r.starts_at)!, endsAt: iso(r.ends_at)!, timezone: r.timezone,
    monitorIds: r.monitor_ids, recurrenceRule: r.recurrence_rule,
    keepChecking: r.keep_checking, showOnStatusPage: r.show_on_status_page, notifySubscribers: r.notify_subscribers,
    workspaceId: r.workspace_id, createdAt: iso(r.created_at)!,
    nextOccurrence: next ? { startsAt: iso(next.startsAt)!, endsAt: iso(next.endsAt)! } : null,
    active: next !== null && next.startsAt <= now,
  };
}

function visibleWindows(db: Db, caller: Caller) {
  let q = db.selectFrom('maintenance_windows').selectAll().where('organization_id', '=', caller.organizationId);
  const ws = workspaceFilter(caller.workspaceIds);
  if (ws) q = q.where('workspace_id', 'in', ws);
  return q;
}

/**
 * Without `past`: windows in progress or still to come (a recurring window
 * with an occurrence ahead counts), soonest next occurrence first. With
 * `past`: windows with no occurrence in progress or ahead, the one whose last
 * occurrence ended latest first.
 */
export async function listMaintenance(db: Db, caller: Caller, past: boolean, now: Date) {
  const rows = await visibleWindows(db, caller).orderBy('created_at').orderBy('id').execute();
  const all = rows.map((r) => ({ r, out: windowOut(r, now) }));
  if (!past) {
    return all.filter((x) => x.out.nextOccurrence !== null)
      .sort((a, b) => a.out.nextOccurrence!.startsAt.localeCompare(b.out.nextOccurrence!.startsAt) || a.r.id.localeCompare(b.r.id))
      .map((x) => x.out);
  }
  return all.filter((x) => x.out.nextOccurrence === null)
    .map((x) => ({ ...x, ended: (lastOccurrence(timingOf(x.r), now)?.endsAt ?? x.r.ends_at).getTime() }))
    .sort((a, b) => b.ended - a.ended || a.r.id.localeCompare(b.r.id))
    .map((x) => x.out);
}

function timestamp(field: string, value: string): Date {
  const d = new Date(value);
  if (!RFC3339.test(value) || Number.isNaN(d.getTime())) throw invalid(field, 'must be an RFC 3339 date-time with an offset');
  return d;
}

/** The create body (CreateMaintenanceWindowBody). */
export interface CreateMaintenanceInput {
  title: string; description?: string | null; workspaceId: string; monitorIds: string[];
  startsAt: string; endsAt: string; recurrenceRule?: string | null; timezone?: string;
  keepChecking?: boolean; showOnStatusPage?: boolean; notifySubscribers?: boolean;
}

/**
 * Creates a window. `startsAt`/`endsAt` (the first occurrence) need an
 * offset and `endsAt` after `startsAt`; `timezone` is an IANA zone (default
 * UTC); every monitor must be a monitor of the window's workspace, anything
 * else is 400 naming `monitorIds.<index>` (the contract's wording); the
 * rule is stored as given.
 */
export async function createMaintenance(db: Db, caller: Caller, input: CreateMaintenanceInput, now: Date) {
  const title = input.title.trim();
  if (!title || title.length > 200) throw invalid('title', 'must be 1 to 200 characters');
  const ws = await visibleWorkspace(db, caller, input.workspaceId);
  const startsAt = timestamp('startsAt', input.startsAt);
  const endsAt = timestamp('endsAt', input.endsAt);
  if (endsAt.getTime() <= startsAt.getTime()) throw invalid('endsAt', 'must be after startsAt');
  const timezone = input.timezone ?? 'UTC';
  if (!IANAZone.isValidZone(timezone)) throw invalid('timezone', 'must be an IANA time zone such as Europe/Berlin');
  if (input.monitorIds.length === 0) throw invalid('monitorIds', 'name at least one monitor');
  const found = new Set((await db.selectFrom('monitors').select('id').where('organization_id', '=', caller.organizationId)
    .where('workspace_id', '=', ws.id).where(sql<SqlBool>`id = any(${sql.val([...new Set(input.monitorIds)])}::text[])` as Expression<SqlBool>).execute()).map((m) => m.id));
  input.monitorIds.forEach((id, i) => {
    if (!found.has(id)) throw invalid(`monitorIds.${i}`, 'no such monitor in this workspace');
  });
  const monitorIds = [...new Set(input.monitorIds)];
  const id = newId('mw');
  return db.transaction().execute(async (tx) => {
    const row = await tx.insertInto('maintenance_windows').values({
      id, organization_id: caller.organizationId, workspace_id: ws.id, title, description: input.description ?? null,
      starts_at: startsAt, ends_at: endsAt, timezone, monitor_ids: monitorIds, recurrence_rule: input.recurrenceRule ?? null,
      keep_checking: input.keepChecking ?? true, show_on_status_page: input.showOnStatusPage ?? true,
      notify_subscribers: input.notifySubscribers ?? false,
    }).returningAll().executeTakeFirstOrThrow();
    const out = windowOut(row, now);
    await queueMaintenanceNews(tx, row);
    await audit(tx, caller, { action: 'maintenance.created', resourceType: 'maintenance', resourceId: id, workspaceId: ws.id,
      changes: diff(null, out, AUDITED) });
    return out;
  });
}

/** Deletes a window with all its occurrences; one in progress ends at once. */
export async function deleteMaintenance(db: Db, caller: Caller, id: string, now: Date) {
  const row = await visibleWindows(db, caller).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('maintenance window', 'id');
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('maintenance_windows').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'maintenance.deleted', resourceType: 'maintenance', resourceId: id, workspaceId: row.workspace_id,
      changes: diff(windowOut(row, now), null, AUDITED) });
  });
  return { id, deleted: true as const };
}
