/**
 * Server agents (docs/agents.md): enrolment with a one-time token (only its
 * SHA-256 is kept, in `agent_tokens`), the list, deletion and the samples.
 *
 * Tenancy, as for notification channels: an agent belongs to a workspace or,
 * with `workspace_id` null, to the whole organisation. A key confined to
 * workspaces sees the organisation-wide agents and its own workspaces'; it
 * may enrol agents in its workspaces only and cannot delete an
 * organisation-wide agent (403 `workspace_confined`); another workspace's
 * agent does not exist for it (404).
 */
import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashToken, newToken } from '../crypto/tokens';
import { ApiError, invalid, notFound } from '../pipeline/errors';
import { hourOut, selectAgents, selectHours, selectSamples, sampleOut, watchableAgent, type AgentRow } from '../repo/agents';
import { audit, diff } from './audit';
import { visibleWorkspace } from './tenancy';

const AUDITED = ['name', 'workspaceId'];
const HOUR = 3_600_000;

/** The API shape of an agent (`Agent`). */
export function agentOut(r: AgentRow) {
  return {
    id: r.id, name: r.name, workspaceId: r.workspace_id, hostname: r.hostname, os: r.os, version: r.version,
    lastSeenAt: r.last_seen_at, createdAt: r.created_at,
  };
}

const scopeOf = (caller: Caller) => ({ organizationId: caller.organizationId, workspaceIds: caller.workspaceIds });

/** An agent the caller sees, or 404 naming `field`. */
async function findAgent(db: Db, caller: Caller, id: string, field = 'id'): Promise<AgentRow> {
  const row = await selectAgents(db, scopeOf(caller)).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('agent', field);
  return row;
}

/** GET /agents: the agents the caller sees, by name. */
export async function listAgents(db: Db, caller: Caller) {
  return (await selectAgents(db, scopeOf(caller)).execute()).map(agentOut);
}

/** POST /agents: enrols an agent; its token is in this answer only. */
export async function enrollAgent(db: Db, caller: Caller, input: { name: string; workspaceId?: string | null }) {
  const name = input.name.trim();
  if (!name) throw invalid('name', 'must not be blank');
  let workspaceId: string | null = null;
  if (input.workspaceId === undefined || input.workspaceId === null) {
    requireWholeOrganisation(caller, 'agent:enroll', 'enrol an organisation-wide agent (name one of its workspaces)', 'workspaceId');
  } else {
    workspaceId = (await visibleWorkspace(db, caller, input.workspaceId)).id;
  }
  const id = newId('agt');
  const { token } = newToken('ag');
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('agents').values({ id, organization_id: caller.organizationId, workspace_id: workspaceId, name }).execute();
    await tx.insertInto('agent_tokens').values({ hash: hashToken(token), agent_id: id }).execute();
    await audit(tx, caller, { action: 'agent.enrolled', resourceType: 'agent', resourceId: id, workspaceId, changes: diff(null, { name, workspaceId }, AUDITED) });
  });
  return { ...agentOut(await findAgent(db, caller, id)), token };
}

/** DELETE /agents: the agent, its token and its samples go at once. */
export async function deleteAgent(db: Db, caller: Caller, id: string | undefined) {
  if (!id) throw new ApiError(400, 'missing_field', 'Name the agent to delete with the query parameter id (or body id).', { field: 'id' }, [{ field: 'id', reason: 'is required' }]);
  const before = await findAgent(db, caller, id);
  if (before.workspace_id === null) requireWholeOrganisation(caller, 'agent:delete', 'delete an organisation-wide agent');
  await db.transaction().execute(async (tx) => {
    // The token, samples and roll-ups follow by cascade; a drain applying samples holds the row until it commits.
    await tx.deleteFrom('agents').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'agent.deleted', resourceType: 'agent', resourceId: id, workspaceId: before.workspace_id,
      changes: diff({ name: before.name, workspaceId: before.workspace_id }, null, AUDITED) });
  });
  return { id, deleted: true as const };
}

/** GET /agents/{id}/metrics: samples of the last `hours` (clamped to 1..168, default 24), newest first, at most `limit` (1..5000, default 500). */
export async function agentMetrics(db: Db, caller: Caller, id: string, q: { hours?: number; limit?: number }, now: Date) {
  const agent = await findAgent(db, caller, id);
  const hours = Math.min(Math.max(Math.trunc(q.hours ?? 24), 1), 168);
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 500), 1), 5000);
  return (await selectSamples(db, agent.id, new Date(now.getTime() - hours * HOUR), limit)).map(sampleOut);
}

/** GET /agents/{id}/metrics/hourly: the hourly roll-ups of the last `days` (clamped to 1..366, default 7), newest first. */
export async function agentHours(db: Db, caller: Caller, id: string, q: { days?: number }, now: Date) {
  const agent = await findAgent(db, caller, id);
  const days = Math.min(Math.max(Math.trunc(q.days ?? 7), 1), 366);
  return (await selectHours(db, agent.id, new Date(now.getTime() - days * 24 * HOUR))).map(hourOut);
}

/**
 * The agent an `agent` monitor of `workspaceId` names in its config, checked:
 * it must be of the caller's organisation, organisation-wide or of that
 * workspace (400 `invalid_config` on `config.agentId` otherwise). An agent
 * monitor is never run by a probe (400 on `probeId`).
 */
export async function watchedAgent(db: Db, caller: Caller, workspaceId: string, config: Record<string, unknown>, probeId?: string): Promise<string> {
  if (probeId !== undefined) throw invalid('probeId', 'an agent monitor is judged by Vigil from the agent\'s reports, not by a probe');
  const id = await watchableAgent(db, { organizationId: caller.organizationId, workspaceId }, String(config.agentId));
  if (!id) {
    const reason = 'no such agent in the organisation (organisation-wide) or in the monitor\'s workspace';
    throw new ApiError(400, 'invalid_config', `Invalid agent config: config.agentId ${reason}.`, { field: 'config.agentId', kind: 'agent' }, [{ field: 'config.agentId', reason }]);
  }
  return id;
}
