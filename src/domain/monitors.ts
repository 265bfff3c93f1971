import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import { newId } from '../crypto/ids';
import { ApiError, invalid, limitReached, notFound } from '../pipeline/errors';
import { isKind, kinds, parseConfig, type MonitorKind } from '../engine/kinds';
import { countMonitors, MONITOR_READ_TABLES, selectMonitors, type MonitorRow } from '../repo/monitors';
import { cachedRows } from '../db/connect';
import { newHeartbeatToken } from '../engine/ping';
import { releaseDependants } from '../engine/incidents';
import { audit, diff } from './audit';
import { watchedAgent } from './agents';
import { MAX_TAG_LENGTH, normaliseTags, visibleWorkspace } from './tenancy';
import { lockParent, serialiseCreates } from './parents';

/** Kinds whose latest check result is shown as `lastCheckDetail`. */
const DETAIL_KINDS = new Set(['mail_posture', 'tls_audit', 'snmp']);
export const DEFAULT_INTERVAL = 300;
/** The longest interval kept: 30 days. */
const MAX_INTERVAL = 2_592_000;

/** An interval as stored: clamped up to the plan's floor and down to 30 days, never refused (spec: Limits). */
function clampInterval(asked: number, caller: Caller): number {
  return Math.min(Math.max(asked, caller.plan.interval_floor_seconds, 1), MAX_INTERVAL);
}

/** The API shape of a monitor; `single` adds `paused` and, for some kinds, `lastCheckDetail`. Config never. */
export function monitorOut(m: MonitorRow, single = false) {
  const out = {
    id: m.id, name: m.name, kind: m.kind as MonitorKind,
    status: (m.paused ? 'paused' : m.status) as 'up' | 'degraded' | 'down' | 'paused' | 'pending',
    statusSince: m.status_since, lastCheckedAt: m.last_checked_at, enabled: m.enabled,
    intervalSeconds: m.interval_seconds, tags: m.tags,
    workspace: { id: m.workspace_id, name: m.workspace_name, slug: m.workspace_slug },
    lastResponseTimeMs: m.last_response_time_ms, lastMessage: m.last_message,
    uptime24h: m.uptime_24h, uptime30d: m.uptime_30d, openIncidentId: m.open_incident_id, hosts: m.hosts,
    confirmations: m.confirmations, dependsOn: m.depends_on, probeId: m.probe_id,
    createdAt: m.created_at, updatedAt: m.updated_at,
  };
  if (!single) return out;
  return {
    ...out,
    paused: m.paused,
    ...(DETAIL_KINDS.has(m.kind) ? { lastCheckDetail: (m.last_check_detail ?? null) as never } : {}),
  };
}

/** Splits a `tag` filter: lower-cased, empty and over-long entries dropped. */
export function tagFilter(raw: string | undefined): string[] {
  if (!raw) return [];
  return normaliseTags(raw.split(',')).filter((t) => t.length > 0 && t.length <= MAX_TAG_LENGTH);
}

function checkTags(tags: string[], field = 'tags'): string[] {
  const out = normaliseTags(tags);
  out.forEach((t, i) => {
    if (!t || t.length > MAX_TAG_LENGTH) throw invalid(`${field}.${i}`, `a tag must be 1 to ${MAX_TAG_LENGTH} characters`);
  });
  if (out.length > 50) throw invalid(field, 'at most 50 tags');
  return out;
}

/** The part of a cache key that says what the caller may see. */
function scopeKey(caller: Caller): string {
  return `${caller.organizationId}\u0000${caller.workspaceIds === null ? '*' : [...caller.workspaceIds].sort().join(',')}`;
}

/** Monitors visible to the caller, with every tag of `tags` (reads are the API's hottest path: cached until a write). */
export async function listMonitors(db: Db, caller: Caller, tag?: string) {
  const tags = tagFilter(tag);
  const rows = await cachedRows(db, `monitors\u0000${scopeKey(caller)}\u0000${tags.join(',')}`, MONITOR_READ_TABLES,
    () => selectMonitors(db, { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, tags, detail: false }).execute());
  return rows.map((m) => monitorOut(m));
}

/** One monitor row visible to the caller, or 404. */
export async function findMonitor(db: Db, caller: Caller, id: string): Promise<MonitorRow> {
  const row = await selectMonitors(db, { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, id }).executeTakeFirst();
  if (!row) throw notFound('monitor', 'id');
  return row;
}

/** The single read (cached like the list). */
export async function getMonitor(db: Db, caller: Caller, id: string) {
  const [row] = await cachedRows(db, `monitor\u0000${scopeKey(caller)}\u0000${id}`, MONITOR_READ_TABLES,
    () => selectMonitors(db, { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, id }).execute());
  if (!row) throw notFound('monitor', 'id');
  return monitorOut(row, true);
}

async function checkDependencies(db: Db, caller: Caller, ids: string[], self?: string): Promise<string[]> {
  const unique = [...new Set(ids)];
  for (const [i, id] of unique.entries()) {
    if (id === self) throw invalid(`dependsOn.${i}`, 'a monitor cannot depend on itself');
    const found = await selectMonitors(db, { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, id }).executeTakeFirst();
    if (!found) throw notFound('monitor', `dependsOn.${i}`);
  }
  return unique;
}

export interface CreateMonitorInput {
  name: string; kind: string; workspaceId: string; config: string;
  intervalSeconds?: number; confirmations?: number; dependsOn?: string[]; probeId?: string; tags?: string[];
}

const AUDITED = ['name', 'kind', 'intervalSeconds', 'confirmations', 'enabled', 'paused', 'tags', 'dependsOn', 'probeId', 'config'];

/** Creates a monitor: interval clamped up to the plan floor, config validated by its kind and sealed. */
export async function createMonitor(db: Db, secrets: SecretBox, caller: Caller, input: CreateMonitorInput) {
  if (!isKind(input.kind)) throw invalid('kind', `must be one of ${Object.keys(kinds).join(', ')}`);
  const name = input.name.trim();
  if (!name || name.length > 200) throw invalid('name', 'must be 1 to 200 characters');
  const ws = await visibleWorkspace(db, caller, input.workspaceId);
  const config = parseConfig(input.kind, input.config);
  const tags = checkTags(input.tags ?? []);
  const dependsOn = await checkDependencies(db, caller, input.dependsOn ?? []);
  // An agent monitor watches an agent its workspace can see, and no probe runs it.
  const agentId = input.kind === 'agent' ? await watchedAgent(db, caller, ws.id, config, input.probeId) : null;
  if (input.probeId !== undefined) {
    const probe = await db.selectFrom('probes').select(['id', 'revoked_at']).where('organization_id', '=', caller.organizationId)
      .where('id', '=', input.probeId).executeTakeFirst();
    if (!probe) throw notFound('probe', 'probeId');
    if (probe.revoked_at) throw invalid('probeId', 'the probe is revoked: it takes no more work');
  }
  const interval = clampInterval(input.intervalSeconds ?? DEFAULT_INTERVAL, caller);
  const id = newId('mon');
  const ping = kinds[input.kind].hasPingUrl ? newHeartbeatToken(secrets) : null;
  await db.transaction().execute(async (tx) => {
    // The workspace may have been deleted since it was read: 404, never a foreign-key failure (src/domain/parents.ts).
    await lockParent(tx, 'workspaces', caller.organizationId, ws.id, 'workspace', 'workspaceId');
    // Serialise creates per organisation so that the cap holds under concurrency.
    await serialiseCreates(tx, caller.organizationId);
    const cap = caller.plan.monitor_cap;
    if (cap !== null) {
      const current = await countMonitors(tx, caller.organizationId);
      if (current >= cap) throw limitReached(caller.plan.code, 'monitors', cap, current);
    }
    await tx.insertInto('monitors').values({
      id, organization_id: caller.organizationId, workspace_id: ws.id, name, kind: input.kind,
      config_enc: secrets.seal(JSON.stringify(config)), interval_seconds: interval,
      confirmations: input.confirmations ?? 1, depends_on: dependsOn, tags,
      heartbeat_token_enc: ping?.enc ?? null, heartbeat_token_hash: ping?.hash ?? null, probe_id: input.probeId ?? null, agent_id: agentId,
    }).execute();
    await audit(tx, caller, { action: 'monitor.created', resourceType: 'monitor', resourceId: id, workspaceId: ws.id,
      changes: diff(null, { name, kind: input.kind, intervalSeconds: interval, confirmations: input.confirmations ?? 1, tags, dependsOn, config: true }, AUDITED) });
  });
  // `paused` belongs to the single read only (spec); the detail kinds show their null lastCheckDetail.
  const m = await findMonitor(db, caller, id);
  return { ...monitorOut(m), ...(DETAIL_KINDS.has(m.kind) ? { lastCheckDetail: null } : {}) };
}

export interface UpdateMonitorInput {
  name?: string; intervalSeconds?: number; confirmations?: number; enabled?: boolean; config?: string; paused?: boolean; tags?: string[] | null;
}

/**
 * Applies a partial change. `paused` needs monitor:pause, every other field
 * monitor:update; `config` is replaced whole; `tags: null` clears them.
 */
export async function updateMonitor(db: Db, secrets: SecretBox, caller: Caller, id: string, input: UpdateMonitorInput, require: (p: 'monitor:update' | 'monitor:pause') => void) {
  const keys = Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined);
  if (keys.length === 0) throw new ApiError(400, 'empty_change', 'The request changes nothing: name at least one field.', {}, [{ field: 'body', reason: 'names no field' }]);
  if (keys.some((k) => k !== 'paused')) require('monitor:update');
  if (keys.includes('paused')) require('monitor:pause');
  const before = await findMonitor(db, caller, id);
  const set: Record<string, unknown> = { updated_at: new Date() };
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (!name || name.length > 200) throw invalid('name', 'must be 1 to 200 characters');
    set.name = name;
  }
  if (input.intervalSeconds !== undefined) set.interval_seconds = clampInterval(input.intervalSeconds, caller);
  if (input.confirmations !== undefined) set.confirmations = input.confirmations;
  if (input.enabled !== undefined) set.enabled = input.enabled;
  // Switched back on, a monitor is due at once rather than at its old schedule: the schedule's trigger (migration 0033) sees to it.
  if (input.config !== undefined) {
    const config = parseConfig(before.kind as MonitorKind, input.config);
    if (before.kind === 'agent') set.agent_id = await watchedAgent(db, caller, before.workspace_id, config);
    set.config_enc = secrets.seal(JSON.stringify(config));
  }
  if (input.tags !== undefined) set.tags = input.tags === null ? [] : checkTags(input.tags);
  if (input.paused !== undefined && input.paused !== before.paused) {
    set.paused = input.paused;
    set.status = input.paused ? 'paused' : 'pending';
    set.status_since = new Date();
  }
  await db.transaction().execute(async (tx) => {
    const updated = await tx.updateTable('monitors').set(set).where('id', '=', id).where('organization_id', '=', caller.organizationId)
      .returning('id').executeTakeFirst();
    // Deleted since it was read: nothing to change or record.
    if (!updated) throw notFound('monitor', 'id');
    const was = { name: before.name, intervalSeconds: before.interval_seconds, confirmations: before.confirmations, enabled: before.enabled, paused: before.paused, tags: before.tags };
    const now = {
      name: set.name ?? was.name, intervalSeconds: set.interval_seconds ?? was.intervalSeconds, confirmations: set.confirmations ?? was.confirmations,
      enabled: set.enabled ?? was.enabled, paused: set.paused ?? was.paused, tags: set.tags ?? was.tags,
    };
    const changes = diff(was, now, AUDITED);
    if (input.config !== undefined) changes.config = { changed: true };
    if (Object.keys(changes).length) {
      await audit(tx, caller, { action: 'monitor.updated', resourceType: 'monitor', resourceId: id, workspaceId: before.workspace_id, changes });
    }
  });
  return getMonitor(db, caller, id);
}

/** The ping URL of a heartbeat monitor; null for other kinds and for a token that cannot be decrypted. */
export async function pushUrl(db: Db, secrets: SecretBox, caller: Caller, id: string, baseUrl: string) {
  const m = await findMonitor(db, caller, id);
  if (!isKind(m.kind) || !kinds[m.kind].hasPingUrl) return { url: null };
  const row = await db.selectFrom('monitors').select('heartbeat_token_enc').where('id', '=', id).executeTakeFirstOrThrow();
  const token = row.heartbeat_token_enc ? secrets.open(row.heartbeat_token_enc) : null;
  return { url: token ? `${baseUrl}/ping/${token}` : null };
}

/** Deletes a monitor and its history. */
export async function deleteMonitor(db: Db, caller: Caller, id: string) {
  const before = await findMonitor(db, caller, id);
  await db.transaction().execute(async (tx) => {
    await releaseDependants(tx, caller.organizationId, id);
    await tx.deleteFrom('check_results').where('monitor_id', '=', id).execute();
    const gone = await tx.deleteFrom('monitors').where('id', '=', id).where('organization_id', '=', caller.organizationId).executeTakeFirst();
    // Deleted meanwhile by another request: that one recorded it.
    if (!Number(gone.numDeletedRows)) throw notFound('monitor', 'id');
    await audit(tx, caller, { action: 'monitor.deleted', resourceType: 'monitor', resourceId: id, workspaceId: before.workspace_id,
      changes: diff({ name: before.name, kind: before.kind }, null, ['name', 'kind']) });
  });
  return { id, deleted: true as const };
}
