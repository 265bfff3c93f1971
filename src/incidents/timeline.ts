import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { queueIncidentNews } from '../statuspages/news';

/**
 * The incident timeline: every state change, acknowledgement, comment,
 * escalation step and notification of an incident is one row of
 * `incident_events`, written here by whoever acted (the engine, alerting,
 * people through the API). A room of its own so that those writers need not
 * import each other.
 */

/** One timeline entry of an incident. */
export interface IncidentEventInput {
  incidentId: string; organizationId: string; kind: string; at?: Date; message?: string | null;
  fromStatus?: string | null; toStatus?: string | null; public?: boolean;
  actor?: { type: string; id: string | null; name: string | null } | null;
}

/**
 * Records timeline entries in one statement, and queues (in the same
 * transaction) the news status-page subscribers are to hear of them.
 */
export async function addEvents(db: Db, rows: IncidentEventInput[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map(eventRow);
  await db.insertInto('incident_events').values(values).execute();
  await queueIncidentNews(db, values.map((v) => ({ id: v.id, incidentId: v.incident_id, kind: v.kind, public: v.public })));
}

/**
 * The row of one timeline entry, for writers that insert it inside a larger
 * statement (a delivery records its attempt and its note at once). Such
 * entries must be of kinds subscribers never hear of (`notification`).
 */
export function eventRow(e: IncidentEventInput) {
  return {
    id: newId('evt'), incident_id: e.incidentId, organization_id: e.organizationId, kind: e.kind, at: e.at ?? new Date(),
    message: e.message ?? null, from_status: e.fromStatus ?? null, to_status: e.toStatus ?? null, public: e.public ?? false,
    actor_type: e.actor?.type ?? 'system', actor_id: e.actor?.id ?? null, actor_name: e.actor?.name ?? null,
  };
}

/** Records one timeline entry of an incident. */
export async function addEvent(db: Db, e: IncidentEventInput): Promise<void> {
  await addEvents(db, [e]);
}

