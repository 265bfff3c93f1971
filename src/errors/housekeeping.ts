/**
 * Error-tracking upkeep, run by the grouper's worker every few minutes:
 * stored events older than the organisation's plan retention
 * (`plans.history_retention_days`, as check results and analytics events)
 * are deleted, except each issue's latest event (the issue shows it as
 * `lastEvent`) and events not grouped yet; so are hourly counts that old
 * (the spark line reads the last 24 hours). Issues, their totals, releases
 * and users seen stay. Upload chunks and assembly outcomes of the Sentry
 * tools go after an hour (an organisation's own go at its next upload too).
 */
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { withTryLock } from '../db/locked';
import { expireUploads } from './upload/chunks';

/** Rows deleted per transaction, so a first run over a large backlog holds no lock, and no dead rows from vacuum, for long. */
const CHUNK = 10_000;

const locked = <T>(db: Db, work: (tx: Db) => Promise<T>) => withTryLock(db, 'errors:housekeeping', work);

/**
 * Deletes what has outlived its keeping, a chunk per transaction. One process
 * at a time (every worker runs it); false when another was at it. Returns
 * the events deleted otherwise.
 */
export async function errorsHousekeeping(db: Db, now: Date = new Date()): Promise<number | false> {
  let deleted = 0;
  for (;;) {
    // Per project, through its (project_id, received_at) index; `= any(array(…))` keeps the delete to those rows (an `in` made it a scan of the table).
    const n = await locked(db, async (tx) => Number((await sql`delete from error_events where seq = any(array(
        select e.seq from error_projects pr join organizations o on o.id = pr.organization_id join plans p on p.code = o.plan
        cross join lateral (
          select e.seq from error_events e
          where e.project_id = pr.id and e.received_at < ${now}::timestamptz - make_interval(days => p.history_retention_days)
            and e.issue_id is not null
            and not exists (select 1 from error_issues i where i.last_event_seq = e.seq)
          limit ${CHUNK}) e
        limit ${CHUNK}))`.execute(tx)).numAffectedRows ?? 0));
    if (n === null) return deleted > 0 ? deleted : false;
    deleted += n;
    if (n < CHUNK) break;
  }
  await locked(db, (tx) => expireUploads(tx));
  await locked(db, (tx) => sql`delete from error_issue_hours h using error_issues i, organizations o, plans p
    where h.issue_id = i.id and o.id = i.organization_id and p.code = o.plan
      and h.hour < ${now}::timestamptz - make_interval(days => p.history_retention_days)`.execute(tx));
  return deleted;
}
