/**
 * Error issues through the API: the list (status, project, search, newest
 * activity first), one issue with its latest event's exception chain, and
 * status changes per the spec's table (resolved records the release of
 * resolution; ignored optionally for `ignoreHours`, lifted when they run
 * out; unresolved reopens). An ignore whose time ran out reads as unresolved.
 */
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import type { Database } from '../db/schema';
import { audit } from '../domain/audit';
import { iso } from '../domain/tenancy';
import { ApiError, invalid, notFound } from '../pipeline/errors';
import { exceptionsOf, framesOf, parsePayload } from './grouping';
import { addIssueEvents, issueActivity } from './timeline';
import { resolveFrames } from './sourcemaps';
import { contextsOf, requestOf } from './eventContext';
import { resolveNative } from './symbols/resolve';

type Status = 'unresolved' | 'resolved' | 'ignored';

function visibleIssues(db: Db, caller: Caller) {
  let q = db.selectFrom('error_issues as i').innerJoin('error_projects as p', 'p.id', 'i.project_id').where('i.organization_id', '=', caller.organizationId);
  if (caller.workspaceIds !== null) q = q.where('p.workspace_id', 'in', caller.workspaceIds.length ? [...caller.workspaceIds] : ['']);
  return q;
}

/** An ignore whose hours ran out is over: the issue is unresolved again. */
const STATUS_NOW = sql<Status>`case when i.status = 'ignored' and i.ignored_until is not null and i.ignored_until <= now() then 'unresolved' else i.status end`;

type IssueRow = {
  id: string; project_id: string; title: string; type: string | null; value: string | null; culprit: string | null; level: string; status: Status;
  times_seen: string; first_seen_at: Date; last_seen_at: Date; resolved_in_release: string | null; ignored_until: Date | null;
  first_release: string | null; last_release: string | null; users_seen: string | number;
};

function columns<O>(q: SelectQueryBuilder<Database & { i: Database['error_issues']; p: Database['error_projects'] }, 'i' | 'p', O>) {
  return q.select(['i.id', 'i.project_id', 'i.title', 'i.type', 'i.value', 'i.culprit', 'i.level', 'i.times_seen', 'i.first_seen_at', 'i.last_seen_at',
    'i.resolved_in_release', 'i.ignored_until', 'i.first_release', 'i.last_release', STATUS_NOW.as('status'),
    sql<string>`(select count(*) from error_issue_users u where u.issue_id = i.id)`.as('users_seen')]);
}

/** Counts of the last 24 hours, oldest first, always 24. */
async function sparks(db: Db, ids: string[]): Promise<Map<string, number[]>> {
  const out = new Map(ids.map((id) => [id, new Array<number>(24).fill(0)]));
  if (ids.length === 0) return out;
  const now = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const rows = await db.selectFrom('error_issue_hours').select(['issue_id', 'hour', 'count']).where('issue_id', 'in', ids)
    .where('hour', '>', new Date(now - 24 * 3_600_000)).execute();
  for (const r of rows) {
    const slot = 23 - Math.round((now - r.hour.getTime()) / 3_600_000);
    if (slot >= 0 && slot < 24) out.get(r.issue_id)![slot] += Number(r.count);
  }
  return out;
}

function issueOut(r: IssueRow, spark: number[]) {
  const ignored = r.status === 'ignored';
  return {
    id: r.id, projectId: r.project_id, title: r.title, type: r.type, value: r.value, culprit: r.culprit, level: r.level as 'error',
    status: r.status, timesSeen: Number(r.times_seen), firstSeenAt: iso(r.first_seen_at)!, lastSeenAt: iso(r.last_seen_at)!, spark,
    resolvedInRelease: r.status === 'resolved' ? r.resolved_in_release : null, ignoredUntil: ignored ? iso(r.ignored_until) : null,
    usersSeen: Number(r.users_seen), firstRelease: r.first_release, lastRelease: r.last_release,
  };
}

/** GET /errors/issues. */
export async function listIssues(db: Db, caller: Caller, query: { status?: string; project?: string; q?: string; limit?: number }) {
  const status = query.status ?? 'unresolved';
  if (!['unresolved', 'resolved', 'ignored', 'all'].includes(status)) throw invalid('status', 'must be unresolved, resolved, ignored or all');
  const limit = Math.min(Math.max(Number(query.limit ?? 50), 1), 200);
  let q = columns(visibleIssues(db, caller));
  if (status !== 'all') q = q.where(STATUS_NOW, '=', status as Status);
  if (query.project) q = q.where('i.project_id', '=', query.project);
  if (query.q) {
    const like = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where((eb) => eb.or([eb('i.type', 'ilike', like), eb('i.value', 'ilike', like), eb('i.culprit', 'ilike', like)]));
  }
  const rows = await q.orderBy('i.last_seen_at', 'desc').orderBy('i.id').limit(limit).execute() as IssueRow[];
  const s = await sparks(db, rows.map((r) => r.id));
  return rows.map((r) => issueOut(r, s.get(r.id)!));
}

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? null : String(v));
const strings = (v: unknown) => (Array.isArray(v) ? v.map((x) => String(x)) : []);

/** A frame as source maps or symbols resolved it. */
interface FrameResolution {
  filename: string | null; absPath: string | null; function: string | null; lineno: number | null; colno: number | null;
  contextLine: string | null; preContext: string[]; postContext: string[]; module?: string | null;
}

function frameOut(f: Record<string, any>, r?: FrameResolution) {
  if (r) {
    return {
      filename: r.filename, absPath: r.absPath, function: r.function, module: r.module !== undefined ? r.module : str(f.module), lineno: r.lineno, colno: r.colno, inApp: f.in_app === true,
      contextLine: r.contextLine, preContext: r.preContext, postContext: r.postContext, resolved: true,
    };
  }
  return {
    filename: str(f.filename), absPath: str(f.abs_path), function: str(f.function), module: str(f.module),
    lineno: Number.isInteger(f.lineno) ? f.lineno : null, colno: Number.isInteger(f.colno) ? f.colno : null, inApp: f.in_app === true,
    contextLine: str(f.context_line), preContext: strings(f.pre_context), postContext: strings(f.post_context), resolved: false,
  };
}

function occurredAt(ts: unknown, fallback: Date): string {
  const d = typeof ts === 'number' ? new Date(ts * 1000) : typeof ts === 'string' ? new Date(ts) : null;
  return (d && !Number.isNaN(d.getTime()) ? d : fallback).toISOString();
}

/** GET /errors/issues/{id}: with the latest event's chain (as the SDK sent it) and the event itself. */
export async function getIssue(db: Db, caller: Caller, id: string) {
  const r = await columns(visibleIssues(db, caller)).select('i.last_event_seq').where('i.id', '=', id).executeTakeFirst() as (IssueRow & { last_event_seq: string | null }) | undefined;
  if (!r) throw notFound('issue', 'id');
  const ev = r.last_event_seq ? await db.selectFrom('error_events').select(['event_id', 'received_at', 'payload']).where('seq', '=', r.last_event_seq).executeTakeFirst() : undefined;
  const e = parsePayload(ev?.payload) as Record<string, any>;
  const tags = Array.isArray(e.tags) ? Object.fromEntries(e.tags.filter((t: unknown) => Array.isArray(t)).map((t: unknown[]) => [String(t[0]), String(t[1])]))
    : Object.fromEntries(Object.entries(e.tags ?? {}).map(([k, v]) => [k, String(v)]));
  const user = e.user && typeof e.user === 'object' ? Object.fromEntries(Object.entries(e.user).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])) : null;
  const s = await sparks(db, [r.id]);
  const activity = await issueActivity(db, r.id);
  const chain = exceptionsOf(e);
  // Resolved at read time: a map uploaded after the event applies too.
  const resolved = await resolveFrames(db, r.project_id, e, chain.flatMap(framesOf));
  // Mobile symbols: an Android frame may become several (inlined methods), an iOS address its inlined chain.
  const native = await resolveNative(db, r.project_id, e, chain, framesOf);
  const typeOf = (x: Record<string, any>) => { const t = native.types.get(x); return t ? t.slice(t.lastIndexOf('.') + 1) : str(x.type); };
  return {
    ...issueOut(r, s.get(r.id)!),
    exceptions: chain.map((x) => ({
      type: typeOf(x), value: str(x.value), mechanism: str(x.mechanism?.type),
      frames: framesOf(x).flatMap((f) => native.frames.get(f)?.map((n) => frameOut(f, n)) ?? [frameOut(f, resolved.get(f))]),
    })),
    lastEvent: ev ? {
      eventId: ev.event_id, occurredAt: occurredAt(e.timestamp, ev.received_at), receivedAt: iso(ev.received_at)!,
      release: str(e.release), environment: str(e.environment), platform: str(e.platform), tags,
      // A free-form object in the contract (a nullable map has no proto form): typed as an empty record.
      user: user as Record<string, never> | null,
      // Free-form like `user`; credential-named keys left out (eventContext.ts).
      contexts: contextsOf(e.contexts) as Record<string, never> | null,
      request: requestOf(e.request),
    } : null,
    activity,
  };
}

/** PATCH /errors/issues/{id}. */
export async function updateIssue(db: Db, caller: Caller, id: string, body: { status: Status; ignoreHours?: number }) {
  if (body.ignoreHours !== undefined && body.status !== 'ignored') {
    throw new ApiError(400, 'invalid_field', '`ignoreHours` goes with status "ignored" only.', { field: 'ignoreHours' }, [{ field: 'ignoreHours', reason: 'only with status ignored' }]);
  }
  return db.transaction().execute(async (tx) => {
    const before = await columns(visibleIssues(tx, caller)).where('i.id', '=', id).executeTakeFirst() as IssueRow | undefined;
    if (!before) throw notFound('issue', 'id');
    const set = body.status === 'resolved'
      ? { status: 'resolved', resolved_in_release: before.last_release, resolved_at: new Date(), ignored_until: null }
      : body.status === 'ignored'
        ? { status: 'ignored', resolved_in_release: null, resolved_at: null, ignored_until: body.ignoreHours ? new Date(Date.now() + body.ignoreHours * 3_600_000) : null }
        : { status: 'unresolved', resolved_in_release: null, resolved_at: null, ignored_until: null };
    await tx.updateTable('error_issues').set(set).where('id', '=', id).execute();
    // An entry of the issue's activity (reopening what is open already is none); a change made here pages nobody.
    if (body.status !== 'unresolved' || before.status !== 'unresolved') {
      await addIssueEvents(tx, [{ issueId: id, organizationId: caller.organizationId, kind: body.status, release: set.resolved_in_release, actor: caller.actor }]);
    }
    await audit(tx, caller, { action: 'error_issue.status_changed', resourceType: 'error_issue', resourceId: id,
      changes: { status: { from: before.status, to: set.status }, ...(set.resolved_in_release ? { resolvedInRelease: { from: null, to: set.resolved_in_release } } : {}) } });
    return { id, status: set.status as Status, resolvedInRelease: set.resolved_in_release, ignoredUntil: iso(set.ignored_until) };
  });
}
