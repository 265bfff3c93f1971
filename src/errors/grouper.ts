/**
 * Grouping behind ingestion: stored events not yet in an issue are taken in
 * batches (`FOR UPDATE SKIP LOCKED`, so any number of workers share the
 * work), grouped (grouping.ts) and counted into their issues set-wise —
 * times seen, first and last seen, releases, the hourly counts of the spark
 * line, the users seen. An event that arrives for a resolved issue reopens it
 * (a regression) unless it comes from a release older than the one the issue
 * was resolved in. A new issue and a regression are entries on the issue's
 * timeline and page the project's channels (alerts.ts), in the batch's
 * transaction: the issue's first batch creates it once however many events
 * it holds, so a burst of one new error pages once.
 */
import semver from 'semver';
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import type { Logger } from '../log';
import { startLoop } from '../jobs/loop';
import { setAsideOldest } from '../ingest/buffer';
import { recordIssueMoments, type IssueMoment } from './alerts';
import { errorsHousekeeping } from './housekeeping';
import { groupEvent, parsePayload, summarise, type EventSummary, type Grouped } from './grouping';
import { deminifiedForGrouping, mapCache, type MapCache } from './sourcemaps';

const BATCH = 1000;

/** The version of `package@1.2.3+build` (or `1.2.3`, `v1.2.3`) when it is semver, else null. */
function versionOf(release: string): semver.SemVer | null {
  const v = release.slice(release.lastIndexOf('@') + 1).replace(/^v(?=\d)/, '');
  return semver.parse(v);
}

/**
 * Whether `release` is older than `than`: as semver where both parse (build
 * metadata included, so `1.2.3+2` follows `1.2.3+1`), else by the order the
 * project first saw them.
 */
export async function olderRelease(db: Db, projectId: string, release: string, than: string): Promise<boolean> {
  if (release === than) return false;
  const a = versionOf(release);
  const b = versionOf(than);
  if (a && b) {
    const c = semver.compareBuild(a, b);
    return c < 0;
  }
  const rows = await db.selectFrom('error_releases').select(['release', 'first_seen_seq']).where('project_id', '=', projectId).where('release', 'in', [release, than]).execute();
  const seq = new Map(rows.map((r) => [r.release, Number(r.first_seen_seq)]));
  return (seq.get(release) ?? Infinity) < (seq.get(than) ?? Infinity);
}

interface Row { seq: string; project_id: string; organization_id: string; received_at: Date; summary: EventSummary | null }
interface Group { projectId: string; organizationId: string; g: Grouped; rows: Row[]; releases: (string | null)[]; environments: (string | null)[]; users: (string | null)[] }

const hourOf = (d: Date) => new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000);

/**
 * Each row's summary: the one stored at ingestion, except for projects with
 * source maps (minified frames group by their original source when a map is
 * known now, reference A4) and events stored before summaries were: their
 * payloads are read and grouped here.
 */
async function summariesOf(tx: Db, rows: Row[]): Promise<EventSummary[]> {
  const projects = [...new Set(rows.map((r) => r.project_id))];
  const withMaps = new Set((await tx.selectFrom('error_sourcemaps').select('project_id').distinct().where('project_id', 'in', projects).execute()).map((x) => x.project_id));
  const reread = rows.filter((r) => r.summary === null || withMaps.has(r.project_id));
  if (reread.length === 0) return rows.map((r) => r.summary!);
  const payloads = new Map((await tx.selectFrom('error_events').select(['seq', 'payload']).where('seq', 'in', reread.map((r) => r.seq)).execute())
    .map((p) => [p.seq, parsePayload(p.payload)]));
  const caches = new Map<string, MapCache>();
  try {
    const out: EventSummary[] = [];
    for (const r of rows) {
      const payload = payloads.get(r.seq);
      if (!payload) { out.push(r.summary!); continue; }
      let view = payload;
      if (withMaps.has(r.project_id)) {
        if (!caches.has(r.project_id)) caches.set(r.project_id, mapCache());
        try { view = await deminifiedForGrouping(tx, r.project_id, payload, caches.get(r.project_id)!); } catch { /* the frames as sent */ }
      }
      // Release, environment and user come from the payload itself; only the grouping sees de-minified frames.
      out.push({ ...summarise(payload), g: groupEvent(view) });
    }
    return out;
  } finally {
    for (const c of caches.values()) c.free();
  }
}

/** Groups one batch; returns how many events it took. */
export async function groupBatch(db: Db, limit = BATCH): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const rows = await tx.selectFrom('error_events').select(['seq', 'project_id', 'organization_id', 'received_at', 'summary'])
      .where('issue_id', 'is', null).orderBy('seq').limit(limit).forUpdate().skipLocked().execute() as Row[];
    if (rows.length === 0) return 0;
    const groups = new Map<string, Group>();
    const summaries = await summariesOf(tx, rows);
    rows.forEach((r, i) => {
      const { g, release, environment, user } = summaries[i];
      const key = `${r.project_id}\u0000${g.fingerprint}`;
      const group = groups.get(key) ?? { projectId: r.project_id, organizationId: r.organization_id, g, rows: [], releases: [], environments: [], users: [] };
      group.g = g; // the latest event's words
      group.rows.push(r);
      group.releases.push(release);
      group.environments.push(environment);
      group.users.push(user);
      groups.set(key, group);
    });
    const releases = [...new Set([...groups.values()].flatMap((gr) => gr.releases.filter((x): x is string => !!x).map((rel) => `${gr.projectId}\u0000${rel}`)))];
    if (releases.length) {
      await tx.insertInto('error_releases').values(releases.map((k) => { const [project_id, release] = k.split('\u0000'); return { project_id, release }; }))
        .onConflict((oc) => oc.columns(['project_id', 'release']).doNothing()).execute();
    }
    // Set-wise: one upsert for every issue of the batch, then one statement each for events, hours and users.
    // Sorted, so concurrent groupers lock shared issues in one order (no deadlock).
    const list = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, gr]) => gr);
    // `inserted` (xmax = 0): this statement created the issue; after a concurrent batch's insert of the fingerprint it is an update.
    const upserted = await tx.insertInto('error_issues').values(list.map((gr) => {
      const first = gr.rows[0];
      const last = gr.rows[gr.rows.length - 1];
      return {
        id: newId('iss'), project_id: gr.projectId, organization_id: gr.organizationId, fingerprint: gr.g.fingerprint, title: gr.g.title,
        type: gr.g.type, value: gr.g.value?.slice(0, 10_000) ?? null, culprit: gr.g.culprit, level: gr.g.level, times_seen: gr.rows.length,
        first_seen_at: first.received_at, last_seen_at: last.received_at, first_release: gr.releases.find((x) => x) ?? null,
        last_release: gr.releases[gr.releases.length - 1], last_event_seq: last.seq,
      };
    })).onConflict((oc) => oc.columns(['project_id', 'fingerprint']).doUpdateSet((eb) => ({
      times_seen: sql`error_issues.times_seen + excluded.times_seen`,
      last_seen_at: sql`greatest(error_issues.last_seen_at, excluded.last_seen_at)`,
      last_release: eb.fn.coalesce('excluded.last_release', 'error_issues.last_release'),
      first_release: eb.fn.coalesce('error_issues.first_release', 'excluded.first_release'),
      last_event_seq: eb.ref('excluded.last_event_seq'), level: eb.ref('excluded.level'), title: eb.ref('excluded.title'),
      value: eb.ref('excluded.value'), culprit: eb.ref('excluded.culprit'),
    }))).returning(['id', 'project_id', 'fingerprint', 'status', 'resolved_in_release', sql<boolean>`(xmax = 0)`.as('inserted')]).execute();
    const issueOf = new Map(upserted.map((u) => [`${u.project_id}\u0000${u.fingerprint}`, u]));
    const moments: IssueMoment[] = [];
    const seqs: string[] = [];
    const seqIssues: string[] = [];
    const hours = new Map<string, { issue_id: string; hour: Date; count: number }>();
    const users = new Map<string, { issue_id: string; user_key: string }>();
    const reopened: string[] = [];
    for (const gr of list) {
      const issue = issueOf.get(`${gr.projectId}\u0000${gr.g.fingerprint}`)!;
      const moment = { issueId: issue.id, projectId: gr.projectId, organizationId: gr.organizationId };
      if (issue.inserted) {
        moments.push({ ...moment, kind: 'first_seen', at: gr.rows[0].received_at, release: gr.releases[0], environment: gr.environments[0] });
      } else if (issue.status === 'resolved') {
        const at = await regressionAt(tx, gr.projectId, issue.resolved_in_release, gr.releases);
        if (at !== null) {
          reopened.push(issue.id);
          moments.push({ ...moment, kind: 'regressed', at: gr.rows[at].received_at, release: gr.releases[at], environment: gr.environments[at] });
        }
      }
      gr.rows.forEach((r, i) => {
        seqs.push(r.seq);
        seqIssues.push(issue.id);
        const h = hourOf(r.received_at);
        const hk = `${issue.id}\u0000${h.getTime()}`;
        const cur = hours.get(hk) ?? { issue_id: issue.id, hour: h, count: 0 };
        cur.count++;
        hours.set(hk, cur);
        const u = gr.users[i];
        if (u) users.set(`${issue.id}\u0000${u}`, { issue_id: issue.id, user_key: u });
      });
    }
    if (reopened.length) await tx.updateTable('error_issues').set({ status: 'unresolved', resolved_in_release: null, resolved_at: null }).where('id', 'in', reopened).execute();
    await sql`update error_events e set issue_id = x.issue_id from unnest(${seqs}::bigint[], ${seqIssues}::text[]) as x(seq, issue_id) where e.seq = x.seq`.execute(tx);
    await tx.insertInto('error_issue_hours').values([...hours.values()])
      .onConflict((oc) => oc.columns(['issue_id', 'hour']).doUpdateSet({ count: sql`error_issue_hours.count + excluded.count` })).execute();
    if (users.size) {
      await tx.insertInto('error_issue_users').values([...users.values()]).onConflict((oc) => oc.columns(['issue_id', 'user_key']).doNothing()).execute();
    }
    await recordIssueMoments(tx, moments);
    return rows.length;
  });
}

/**
 * The index of the first of the events of `releases` that reopens an issue
 * resolved in `resolvedIn` (the spec's table), or null when none does.
 */
async function regressionAt(db: Db, projectId: string, resolvedIn: string | null, releases: (string | null)[]): Promise<number | null> {
  for (const [i, r] of releases.entries()) {
    // No release on either side: any later event reopens.
    if (r === null || resolvedIn === null) return i;
    if (!(await olderRelease(db, projectId, r, resolvedIn))) return i;
  }
  return null;
}

/**
 * Runs grouping in the background (src/jobs/loop.ts): at once while there is
 * a backlog, else every `pollMs`; and housekeeping (housekeeping.ts) at start
 * and every `housekeepingMs`.
 */
export function startGrouper(db: Db, log: Logger, pollMs = 250, housekeepingMs = 10 * 60_000): { stop(): Promise<void> } {
  const loop = startLoop({
    name: 'grouping error events', log, run: (n) => groupBatch(db, n), limit: BATCH, pollMs, gapMs: pollMs,
    // An event that cannot be grouped even alone leaves the store for ingest_rejected, whole.
    setAside: (error) => setAsideOldest(db, 'error_events', 'error_events', error, sql`t.issue_id is null`),
  });
  const house = () => errorsHousekeeping(db).catch((e: unknown) => log.error('error tracking housekeeping', e));
  void house();
  const timer = setInterval(() => void house(), housekeepingMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await loop.stop();
    },
  };
}
