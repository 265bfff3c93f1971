import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { addEvent } from '../incidents/timeline';
import { queueAlerts } from '../alerting/dispatch';
import { ApiError, invalid, conflict } from '../pipeline/errors';
import type { Permission } from '../auth/roles';
import { getIncident } from './incidents';

const MAX_POSTMORTEM = 50_000;

function actorOf(caller: Caller) {
  return { type: caller.actor.type, id: caller.actor.id, name: caller.actor.name };
}

export interface IncidentChange { status?: 'acknowledged' | 'resolved'; comment?: string; publish?: boolean }

/**
 * Acknowledges, resolves and/or comments on an incident, each part checked
 * against its own permission (publish: status_page:manage too). Acknowledging
 * or resolving stops any escalation and alerts the channels the opening went to.
 * Acknowledging moves any other state to acknowledged (spec: Incident status,
 * "any"), a resolved incident included, which is then unresolved again and
 * keeps the first `acknowledgedAt`; acknowledging or resolving twice changes
 * nothing.
 */
export async function changeIncident(db: Db, caller: Caller, id: string, body: IncidentChange, require: (p: Permission) => void) {
  if (body.status === undefined && body.comment === undefined) {
    throw new ApiError(400, 'empty_change', 'Send a status or a comment (publish goes with a comment).', {}, [{ field: 'comment', reason: 'status or comment is required' }]);
  }
  if (body.status === 'acknowledged') require('incident:acknowledge');
  if (body.status === 'resolved') require('incident:resolve');
  if (body.comment !== undefined) require('incident:comment');
  if (body.publish && body.comment !== undefined) require('status_page:manage');
  const comment = body.comment?.trim();
  if (body.comment !== undefined && !comment) throw invalid('comment', 'must not be blank');
  await getIncident(db, caller, id); // 404 unless visible
  const now = new Date();
  await db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('incidents').select(['id', 'organization_id', 'monitor_id', 'status', 'acknowledged_at', 'resolved_at'])
      .where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
    if (body.status === 'acknowledged' && row.status !== 'acknowledged') {
      await tx.updateTable('incidents').set({ acknowledged_at: row.acknowledged_at ?? now, status: 'acknowledged', resolved_at: null })
        .where('id', '=', id).execute();
      await addEvent(tx, { incidentId: id, organizationId: row.organization_id, kind: 'acknowledged', at: now, actor: actorOf(caller), fromStatus: row.status, toStatus: 'acknowledged' });
      await queueAlerts(tx, { ...row, status: 'acknowledged' }, 'incident.acknowledged');
    }
    if (body.status === 'resolved' && row.status !== 'resolved') {
      await tx.updateTable('incidents').set({ resolved_at: now, status: 'resolved' }).where('id', '=', id).execute();
      await addEvent(tx, { incidentId: id, organizationId: row.organization_id, kind: 'resolved', at: now, actor: actorOf(caller), fromStatus: row.status, toStatus: 'resolved' });
      await queueAlerts(tx, { ...row, status: 'resolved' }, 'incident.resolved');
    }
    if (comment) {
      await addEvent(tx, { incidentId: id, organizationId: row.organization_id, kind: 'comment', at: now, actor: actorOf(caller), message: comment, public: body.publish === true });
    }
  });
  return getIncident(db, caller, id);
}

/** Stores or replaces the postmortem of a resolved incident (1 to 50,000 characters after trimming). */
export async function writePostmortem(db: Db, caller: Caller, id: string, body: string) {
  const text = body.trim();
  if (!text) throw new ApiError(400, 'postmortem_required', 'The postmortem is empty.', {}, [{ field: 'body', reason: 'must not be blank' }]);
  const length = [...text].length; // characters as people count them (code points)
  if (length > MAX_POSTMORTEM) {
    throw new ApiError(400, 'postmortem_too_long', `The postmortem is ${length} characters long; at most ${MAX_POSTMORTEM} are kept.`,
      { limit: String(MAX_POSTMORTEM), length: String(length) }, [{ field: 'body', reason: `at most ${MAX_POSTMORTEM} characters` }]);
  }
  const incident = await getIncident(db, caller, id);
  if (incident.status !== 'resolved') throw conflict('incident_not_resolved', 'A postmortem can only be written for a resolved incident.', { status: incident.status });
  const author = await db.selectFrom('users').select(['name', 'email']).where('id', '=', caller.userId).executeTakeFirstOrThrow();
  await db.updateTable('incidents').set({ postmortem_body: text, postmortem_author: author.name ?? author.email, postmortem_updated_at: new Date() })
    .where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
  return getIncident(db, caller, id);
}
