/**
 * What grouping makes of a new issue and a regression: an entry on the
 * issue's timeline and a page to each enabled, confirmed channel attached to
 * its project, queued in grouping's own transaction (so an event grouped
 * twice after a crash cannot page twice, and a page is never lost).
 */
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { DELIVERY_ATTEMPTS } from '../alerting/dispatch';
import { enqueueMany } from '../jobs/queue';
import { addIssueEvents } from './timeline';

/** One moment in an issue's life that pages: its first event, or an event that reopened it. */
export interface IssueMoment {
  kind: 'first_seen' | 'regressed';
  issueId: string;
  projectId: string;
  organizationId: string;
  /** When the event behind it was received. */
  at: Date;
  release: string | null;
  environment: string | null;
}

const EVENT = { first_seen: 'error_issue.created', regressed: 'error_issue.regressed' } as const;

/**
 * Records `moments` on their issues' timelines and queues one delivery per
 * moment and channel of its project, in a few statements whatever their
 * number. Returns how many deliveries were queued.
 */
export async function recordIssueMoments(db: Db, moments: IssueMoment[]): Promise<number> {
  if (moments.length === 0) return 0;
  await addIssueEvents(db, moments.map((m) => ({
    issueId: m.issueId, organizationId: m.organizationId, kind: m.kind, at: m.at, release: m.release, environment: m.environment,
  })));
  const links = await db.selectFrom('error_project_channels as pc').innerJoin('notification_channels as c', 'c.id', 'pc.channel_id')
    .select(['pc.project_id', 'c.id']).where('pc.project_id', 'in', [...new Set(moments.map((m) => m.projectId))])
    .where('c.enabled', '=', true).where('c.confirmed_at', 'is not', null).execute();
  const rows = moments.flatMap((m) => links.filter((l) => l.project_id === m.projectId).map((l) => ({
    id: newId('dlv'), organization_id: m.organizationId, channel_id: l.id, incident_id: null, error_issue_id: m.issueId, event: EVENT[m.kind],
  })));
  if (rows.length === 0) return 0;
  await db.insertInto('deliveries').values(rows).execute();
  await enqueueMany(db, 'deliver', rows.map((r) => ({ deliveryId: r.id })), DELIVERY_ATTEMPTS);
  return rows.length;
}
