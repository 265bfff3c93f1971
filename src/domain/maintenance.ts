/**
 * Maintenance windows: GET/POST/DELETE /maintenance, GET/PATCH /maintenance/{id}. A window belongs to one
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

/** The update body (UpdateMaintenanceWindowBody): any field of the create body but the workspace. */
export type UpdateMaintenanceInput = Partial<Omit<CreateMaintenanceInput, 'workspaceId'>>;

type Columns = Partial<Pick<Row, 'title' | 'description' | 'starts_at' | 'ends_at' | 'timezone' | 'monitor_ids' | 'recurrence_rule'
  | 'keep_checking' | 'show_on_status_page' | 'notify_subscribers'>>;

function checkTitle(raw: string): string {
  const title = raw.trim();
  if (!title || title.length > 200) throw invalid('title', 'must be 1 to 200 characters');
  return title;
}

/** An empty text is no text (a description or a rule): the protobuf way of clearing one, and never a rule. */
const textOrNull = (v: string | null | undefined) => (v === undefined ? undefined : v === null || v.trim() === '' ? null : v);

/**
 * The checks of createMaintenanceWindow on the fields of `input` that are
 * present (all the required ones on create), as columns: the same codes and
 * `details.field` for both writes. `stored` holds the times kept by an
 * update, so that `endsAt` stays after `startsAt` whichever is given; the
 * monitors must be of workspace `workspaceId`.
 */
async function checkedColumns(db: Db, caller: Caller, workspaceId: string, input: UpdateMaintenanceInput,
  stored?: { startsAt: Date; endsAt: Date }): Promise<Columns> {
  const out: Columns = {};
  if (input.title !== undefined) out.title = checkTitle(input.title);
  if (input.startsAt !== undefined) out.starts_at = timestamp('startsAt', input.startsAt);
  if (input.endsAt !== undefined) out.ends_at = timestamp('endsAt', input.endsAt);
  const startsAt = out.starts_at ?? stored?.startsAt;
  const endsAt = out.ends_at ?? stored?.endsAt;
  if (startsAt && endsAt && endsAt.getTime() <= startsAt.getTime()) throw invalid('endsAt', 'must be after startsAt');
  if (input.timezone !== undefined) {
    if (!IANAZone.isValidZone(input.timezone)) throw invalid('timezone', 'must be an IANA time zone such as Europe/Berlin');
    out.timezone = input.timezone;
  }
  if (input.monitorIds !== undefined) {
    if (input.monitorIds.length === 0) throw invalid('monitorIds', 'name at least one monitor');
    const found = new Set((await db.selectFrom('monitors').select('id').where('organization_id', '=', caller.organizationId)
      .where('workspace_id', '=', workspaceId).where(sql<SqlBool>`id = any(${sql.val([...new Set(input.monitorIds)])}::text[])` as Expression<SqlBool>).execute()).map((m) => m.id));
    input.monitorIds.forEach((id, i) => {
      if (!found.has(id)) throw invalid(`monitorIds.${i}`, 'no such monitor in this workspace');
    });
    out.monitor_ids = [...new Set(input.monitorIds)];
  }
  const description = textOrNull(input.description);
  if (description !== undefined) out.description = description;
  const rule = textOrNull(input.recurrenceRule);
  if (rule !== undefined) out.recurrence_rule = rule;
  if (input.keepChecking !== undefined) out.keep_checking = input.keepChecking;
  if (input.showOnStatusPage !== undefined) out.show_on_status_page = input.showOnStatusPage;
  if (input.notifySubscribers !== undefined) out.notify_subscribers = input.notifySubscribers;
  return out;
}

/**
 * Creates a window. `startsAt`/`endsAt` (the first occurrence) need an
 * offset and `endsAt` after `startsAt`; `timezone` is an IANA zone (default
 * UTC); every monitor must be a monitor of the window's workspace, anything
 * else is 400 naming `monitorIds.<index>` (the contract's wording); the
 * rule is stored as given (an empty one is none).
 */
export async function createMaintenance(db: Db, caller: Caller, input: CreateMaintenanceInput, now: Date) {
  checkTitle(input.title);
  const ws = await visibleWorkspace(db, caller, input.workspaceId);
  const c = await checkedColumns(db, caller, ws.id, { timezone: 'UTC', ...input });
  const id = newId('mw');
  return db.transaction().execute(async (tx) => {
    const row = await tx.insertInto('maintenance_windows').values({
      id, organization_id: caller.organizationId, workspace_id: ws.id, title: c.title!, description: c.description ?? null,
      starts_at: c.starts_at!, ends_at: c.ends_at!, timezone: c.timezone!, monitor_ids: c.monitor_ids!, recurrence_rule: c.recurrence_rule ?? null,
      keep_checking: c.keep_checking ?? true, show_on_status_page: c.show_on_status_page ?? true,
      notify_subscribers: c.notify_subscribers ?? false,
    }).returningAll().executeTakeFirstOrThrow();
    const out = windowOut(row, now);
    await queueMaintenanceNews(tx, row);
    await audit(tx, caller, { action: 'maintenance.created', resourceType: 'maintenance', resourceId: id, workspaceId: ws.id,
      changes: diff(null, out, AUDITED) });
    return out;
  });
}

async function visibleWindow(db: Db, caller: Caller, id: string): Promise<Row> {
  const row = await visibleWindows(db, caller).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('maintenance window', 'id');
  return row;
}

/** One window the caller sees, in the list's shape; 404 for one outside its reach as for a made-up id. */
export async function getMaintenance(db: Db, caller: Caller, id: string, now: Date) {
  return windowOut(await visibleWindow(db, caller, id), now);
}

/**
 * Changes the fields given, checked as on create (checkedColumns); the
 * window keeps its id, workspace and creation time. The row is locked
 * while it changes, so two edits never interleave their checks. With
 * subscribers to tell, a change of times (or switching the news on) is
 * announced again while its next occurrence is still ahead
 * (queueMaintenanceNews; the start news is keyed by window, so it moves).
 */
export async function updateMaintenance(db: Db, caller: Caller, id: string, input: UpdateMaintenanceInput, now: Date) {
  const before = await visibleWindow(db, caller, id);
  const c = await checkedColumns(db, caller, before.workspace_id, input, { startsAt: before.starts_at, endsAt: before.ends_at });
  return db.transaction().execute(async (tx) => {
    const locked = await tx.selectFrom('maintenance_windows').selectAll().where('id', '=', id)
      .where('organization_id', '=', caller.organizationId).forUpdate().executeTakeFirst();
    if (!locked) throw notFound('maintenance window', 'id');
    const ends = c.ends_at ?? locked.ends_at;
    if (ends.getTime() <= (c.starts_at ?? locked.starts_at).getTime()) throw invalid('endsAt', 'must be after startsAt');
    const prior = windowOut(locked, now);
    const changes = diff(prior, windowOut({ ...locked, ...c }, now), AUDITED);
    if (Object.keys(changes).length === 0) return prior;
    const row = await tx.updateTable('maintenance_windows').set(c).where('id', '=', id)
      .where('organization_id', '=', caller.organizationId).returningAll().executeTakeFirstOrThrow();
    const out = windowOut(row, now);
    const retimed = ['startsAt', 'endsAt', 'timezone', 'recurrenceRule'].some((f) => f in changes);
    const switchedOn = row.notify_subscribers && !locked.notify_subscribers;
    if ((retimed || switchedOn) && out.nextOccurrence && !out.active) {
      await queueMaintenanceNews(tx, { id, notify_subscribers: row.notify_subscribers, starts_at: new Date(out.nextOccurrence.startsAt) });
    }
    await audit(tx, caller, { action: 'maintenance.updated', resourceType: 'maintenance', resourceId: id, workspaceId: row.workspace_id, changes });
    return out;
  });
}

/** Deletes a window with all its occurrences; one in progress ends at once. */
export async function deleteMaintenance(db: Db, caller: Caller, id: string, now: Date) {
  const row = await visibleWindow(db, caller, id);
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('maintenance_windows').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'maintenance.deleted', resourceType: 'maintenance', resourceId: id, workspaceId: row.workspace_id,
      changes: diff(windowOut(row, now), null, AUDITED) });
  });
  return { id, deleted: true as const };
}
