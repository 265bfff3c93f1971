/**
 * The timeline of an error issue: its first event, its regressions (both
 * written by grouping, with the release of the event behind them) and the
 * status changes people make through the API (with who made them). One row
 * of `error_issue_events` each, read back oldest first as the issue's
 * `activity`.
 */
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { iso } from '../domain/tenancy';

/** The kinds of entry: the first two happen to an issue, the other three are done to it. */
export type IssueEventKind = 'first_seen' | 'regressed' | 'resolved' | 'ignored' | 'unresolved';

/** One entry to record. `actor` is absent for what the service did by itself. */
export interface IssueEventInput {
  issueId: string;
  organizationId: string;
  kind: IssueEventKind;
  at?: Date;
  release?: string | null;
  environment?: string | null;
  actor?: Caller['actor'] | null;
}

/** Records entries in one statement (in the caller's transaction when `db` is one). */
export async function addIssueEvents(db: Db, rows: IssueEventInput[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('error_issue_events').values(rows.map((e) => ({
    issue_id: e.issueId, organization_id: e.organizationId, kind: e.kind, at: e.at ?? new Date(), release: e.release ?? null,
    environment: e.environment ?? null, actor_type: e.actor?.type ?? null, actor_id: e.actor?.id ?? null, actor_name: e.actor?.name ?? null,
  }))).execute();
}

/** The `activity` of an issue the caller has already been shown: its timeline, oldest first. */
export async function issueActivity(db: Db, issueId: string) {
  const rows = await db.selectFrom('error_issue_events').select(['kind', 'at', 'release', 'actor_type', 'actor_id', 'actor_name'])
    .where('issue_id', '=', issueId).orderBy('seq').execute();
  return rows.map((r) => ({
    kind: r.kind as IssueEventKind, at: iso(r.at)!, release: r.release,
    actor: r.actor_type ? { type: r.actor_type as 'user' | 'api_key' | 'system', id: r.actor_id, name: r.actor_name } : null,
  }));
}
