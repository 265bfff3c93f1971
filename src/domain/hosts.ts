/**
 * Hosts: the machines monitors run on. A host belongs to the organisation
 * (no workspace); the links between monitors and hosts live in
 * `monitor_hosts`.
 *
 * Figures of a host:
 * - a monitor is *exclusive* to a host when that host is the only one it is
 *   linked to; `pinned` counts the exclusive monitors, `spanning` the ones
 *   also linked to other hosts;
 * - `status` comes from the exclusive monitors only (see `hostStatus`);
 *   spanning monitors colour no host; no exclusive monitor means `null`.
 *
 * Workspace confinement: hosts are organisation-level, so a confined key
 * lists and reads every host of its organisation, but every figure and every
 * monitor list is computed from the monitors the key can see only — a
 * monitor outside its workspaces neither appears in a host's `monitors` nor
 * counts toward `pinned`, `spanning` or `status`. Exclusivity itself is a
 * fact about the monitor's links (all of which point to hosts the key sees),
 * so `alsoOn` is complete. A confined key may create hosts and link or unlink
 * the monitors it sees, but it cannot rename or delete a host (403
 * `workspace_confined`): that would change what keys of other workspaces see.
 */
import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { ApiError, conflict, invalid, notFound } from '../pipeline/errors';
import type { MonitorKind } from '../engine/kinds';
import { hostByName, hostIdsOfMonitor, RANKED_STATUS, selectHostMonitors, selectHosts, type HostRow } from '../repo/hosts';
import { audit, diff } from './audit';
import { selectMonitors, type MonitorRow } from '../repo/monitors';
import { findMonitor } from './monitors';
import { lockParent, lockParentForChange, serialiseCreates } from './parents';

const MAX_NAME = 253;
const MAX_FREE_TEXT: Record<'provider' | 'address' | 'notes', number> = { provider: 1000, address: 1000, notes: 10000 };
const AUDITED = ['name', 'provider', 'address', 'notes'];

type Status = 'up' | 'degraded' | 'down' | 'paused' | 'pending';

/**
 * The status of a host from its exclusive monitors (`worst` is the highest
 * rank among them, as `selectHosts` computes it):
 * - the worst of up, degraded and down (down > degraded > up) whenever at
 *   least one exclusive monitor is in one of those states; paused and pending
 *   monitors are then ignored (they say nothing about the machine);
 * - when every exclusive monitor is paused or pending: `pending` if any is
 *   pending, else `paused`;
 * - `null` when the host has no exclusive monitor (visible to the caller).
 * A monitor's status is the one its own reads show (`paused` when paused).
 */
export function hostStatus(worst: number | null): Status | null {
  return worst === null ? null : RANKED_STATUS[Number(worst)] ?? null;
}

/** The API shape of a host (Host in the contract). */
export function hostOut(h: HostRow) {
  return {
    id: h.id, name: h.name, provider: h.provider, address: h.address, notes: h.notes,
    status: hostStatus(h.worst), pinned: Number(h.pinned), spanning: Number(h.spanning), createdAt: h.created_at,
  };
}

function filterOf(caller: Caller) {
  return { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds };
}

/** One host of the caller's organisation with its figures, or 404. */
async function findHost(db: Db, caller: Caller, id: string, field = 'id'): Promise<HostRow> {
  const row = await selectHosts(db, { ...filterOf(caller), id }).executeTakeFirst();
  if (!row) throw notFound('host', field);
  return row;
}

/** A monitor the caller sees, named in the body or query as `monitorId`, or 404 naming that field. */
async function namedMonitor(db: Db, caller: Caller, id: string): Promise<MonitorRow> {
  const row = await selectMonitors(db, { organizationId: caller.organizationId, workspaceIds: caller.workspaceIds, id }).executeTakeFirst();
  if (!row) throw notFound('monitor', 'monitorId');
  return row;
}

function refuseConfined(caller: Caller, what: string): void {
  requireWholeOrganisation(caller, 'monitor:update', `${what} a host, which belongs to the whole organisation`);
}

/** A host name: trimmed, 1 to 253 characters, something besides dots. */
function checkName(raw: string): string {
  const name = raw.trim();
  if (!name || name.length > MAX_NAME) throw invalid('name', `must be 1 to ${MAX_NAME} characters`);
  if (!name.replace(/\.+$/, '')) throw invalid('name', 'must contain more than dots');
  return name;
}

/** A free-text field: null and '' clear it (stored as null); otherwise kept as given. */
function freeText(field: 'provider' | 'address' | 'notes', v: string | null | undefined): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (v.length > MAX_FREE_TEXT[field]) throw invalid(field, `at most ${MAX_FREE_TEXT[field]} characters`);
  return v;
}

function duplicate(name: string): ApiError {
  return conflict('duplicate_host_name', `A host named ${JSON.stringify(name)} already exists (names are compared ignoring case and a trailing dot).`, { name }, 'name');
}

/** True for PostgreSQL's unique violation on the host name index (a concurrent create or rename). */
function isNameClash(e: unknown): boolean {
  const err = e as { code?: string; constraint?: string };
  return err?.code === '23505' && err.constraint === 'hosts_org_name_key';
}

/**
 * Serialises host-name writes of one organisation, so the pre-check and the
 * write agree (FOR NO KEY UPDATE: a delete's audit entry, which takes KEY
 * SHARE of the organisation after locking its host, never waits on it).
 */
async function lockOrganization(tx: Db, organizationId: string): Promise<void> {
  await serialiseCreates(tx, organizationId);
}

/** Every host of the organisation, figures from the monitors the caller sees. */
export async function listHosts(db: Db, caller: Caller) {
  const rows = await selectHosts(db, filterOf(caller)).execute();
  return rows.map(hostOut);
}

/** One host with its monitors (the ones the caller sees), each with `pinned` and `alsoOn`. */
export async function getHost(db: Db, caller: Caller, id: string) {
  const host = hostOut(await findHost(db, caller, id));
  const monitors = await selectHostMonitors(db, caller.organizationId, id, caller.workspaceIds).execute();
  return {
    ...host,
    monitors: monitors.map((m) => ({
      id: m.id, name: m.name, kind: m.kind as MonitorKind, status: m.status as Status,
      pinned: m.also_on.length === 0, alsoOn: m.also_on,
    })),
  };
}

export interface CreateHostInput { name: string; provider?: string | null; address?: string | null; notes?: string | null }

/** Creates a host; a name equal to an existing one ignoring case and a trailing dot is 409 `duplicate_host_name`. */
export async function createHost(db: Db, caller: Caller, input: CreateHostInput) {
  const name = checkName(input.name);
  const values = { provider: freeText('provider', input.provider), address: freeText('address', input.address), notes: freeText('notes', input.notes) };
  const id = newId('host');
  try {
    await db.transaction().execute(async (tx) => {
      await lockOrganization(tx, caller.organizationId);
      if (await hostByName(tx, caller.organizationId, name)) throw duplicate(name);
      await tx.insertInto('hosts').values({ id, organization_id: caller.organizationId, name, ...values }).execute();
      await audit(tx, caller, { action: 'host.created', resourceType: 'host', resourceId: id, workspaceId: null,
        changes: diff(null, { name, ...values }, AUDITED) });
    });
  } catch (e) {
    if (isNameClash(e)) throw duplicate(name);
    throw e;
  }
  return hostOut(await findHost(db, caller, id));
}

export interface UpdateHostInput { name?: string; provider?: string | null; address?: string | null; notes?: string | null }

/**
 * Changes any of name, provider, address, notes. For the free-text fields
 * null or '' clears the value. A name taken by another host is 409.
 */
export async function updateHost(db: Db, caller: Caller, id: string, input: UpdateHostInput) {
  const keys = (['name', 'provider', 'address', 'notes'] as const).filter((k) => input[k] !== undefined);
  if (keys.length === 0) throw new ApiError(400, 'empty_change', 'The request changes nothing: name at least one field.');
  const before = await findHost(db, caller, id);
  refuseConfined(caller, 'change');
  const set: { name?: string; provider?: string | null; address?: string | null; notes?: string | null } = {};
  if (input.name !== undefined) set.name = checkName(input.name);
  for (const f of ['provider', 'address', 'notes'] as const) if (input[f] !== undefined) set[f] = freeText(f, input[f]);
  try {
    await db.transaction().execute(async (tx) => {
      await lockOrganization(tx, caller.organizationId);
      if (set.name !== undefined && await hostByName(tx, caller.organizationId, set.name, id)) throw duplicate(set.name);
      const row = await tx.updateTable('hosts').set(set).where('id', '=', id).where('organization_id', '=', caller.organizationId)
        .returning(['name', 'provider', 'address', 'notes']).executeTakeFirst();
      if (!row) throw notFound('host', 'id');
      const changes = diff(before, row, AUDITED);
      if (Object.keys(changes).length) {
        await audit(tx, caller, { action: 'host.updated', resourceType: 'host', resourceId: id, workspaceId: null, changes });
      }
    });
  } catch (e) {
    if (isNameClash(e)) throw duplicate(set.name ?? before.name);
    throw e;
  }
  return { ok: true as const };
}

/** Deletes a host; its monitors keep running, only their links to it go. */
export async function deleteHost(db: Db, caller: Caller, id: string) {
  const before = await findHost(db, caller, id);
  refuseConfined(caller, 'delete');
  await db.transaction().execute(async (tx) => {
    // The host first, then its links: a link being added waits (and then finds no host) instead of deadlocking.
    await lockParentForChange(tx, 'hosts', caller.organizationId, id, 'host', 'id');
    const detached = await tx.deleteFrom('monitor_hosts').where('host_id', '=', id).returning('monitor_id').execute();
    const gone = await tx.deleteFrom('hosts').where('id', '=', id).where('organization_id', '=', caller.organizationId).executeTakeFirst();
    if (!Number(gone.numDeletedRows)) throw notFound('host', 'id');
    const changes = diff(before, null, AUDITED);
    if (detached.length) changes.monitorIds = { from: detached.map((r) => r.monitor_id).sort(), to: [] };
    await audit(tx, caller, { action: 'host.deleted', resourceType: 'host', resourceId: id, workspaceId: null, changes });
  });
  return { id, deleted: true as const };
}

/** Links a monitor the caller sees to a host; linking it again changes nothing (and records nothing). */
export async function addHostMonitor(db: Db, caller: Caller, hostId: string, monitorId: string) {
  await findHost(db, caller, hostId);
  const monitor = await namedMonitor(db, caller, monitorId);
  await db.transaction().execute(async (tx) => {
    // Either may have been deleted since it was read: 404, never a foreign-key failure (src/domain/parents.ts).
    await lockParent(tx, 'hosts', caller.organizationId, hostId, 'host', 'id');
    await lockParent(tx, 'monitors', caller.organizationId, monitor.id, 'monitor', 'monitorId');
    const added = await tx.insertInto('monitor_hosts').values({ monitor_id: monitor.id, host_id: hostId })
      .onConflict((oc) => oc.columns(['monitor_id', 'host_id']).doNothing()).returning('host_id').execute();
    if (added.length) {
      await audit(tx, caller, { action: 'host.monitor_added', resourceType: 'host', resourceId: hostId, workspaceId: monitor.workspace_id,
        changes: { monitorId: { from: null, to: monitor.id } } });
    }
  });
  return { ok: true as const };
}

/**
 * Unlinks a monitor from a host. A monitor that is not linked is still 200;
 * an unknown host, or a monitor the caller cannot see, is 404 (a confined key
 * never touches links of monitors outside its workspaces).
 */
export async function removeHostMonitor(db: Db, caller: Caller, hostId: string, monitorId: string | undefined) {
  if (monitorId === undefined || monitorId === '') throw invalid('monitorId', 'required, in the query or the body');
  await findHost(db, caller, hostId);
  const monitor = await namedMonitor(db, caller, monitorId);
  await db.transaction().execute(async (tx) => {
    const removed = await tx.deleteFrom('monitor_hosts').where('host_id', '=', hostId).where('monitor_id', '=', monitor.id).returning('host_id').execute();
    if (removed.length) {
      await audit(tx, caller, { action: 'host.monitor_removed', resourceType: 'host', resourceId: hostId, workspaceId: monitor.workspace_id,
        changes: { monitorId: { from: monitor.id, to: null } } });
    }
  });
  return { ok: true as const };
}

/** The hosts a monitor the caller sees runs on (Host records, name order). */
export async function listMonitorHosts(db: Db, caller: Caller, monitorId: string) {
  const monitor = await findMonitor(db, caller, monitorId);
  const ids = await hostIdsOfMonitor(db, monitor.id);
  if (!ids.length) return [];
  const rows = await selectHosts(db, { ...filterOf(caller), ids }).execute();
  return rows.map(hostOut);
}

/**
 * Replaces the whole set of hosts of a monitor the caller sees. Ids that are
 * not hosts of the caller's organisation are dropped, not refused; repeats
 * count once; an empty list leaves the monitor on no particular host.
 */
export async function setMonitorHosts(db: Db, caller: Caller, monitorId: string, hostIds: readonly string[]) {
  const monitor = await findMonitor(db, caller, monitorId);
  const wanted = [...new Set(hostIds)];
  await db.transaction().execute(async (tx) => {
    // Serialise concurrent replacements of the same monitor's set; a monitor deleted meanwhile is 404.
    await lockParentForChange(tx, 'monitors', caller.organizationId, monitor.id, 'monitor', 'id');
    // KEY SHARE: a host deleted meanwhile is dropped like an unknown id, never linked (a foreign-key failure).
    const kept = wanted.length
      ? (await tx.selectFrom('hosts').select('id').where('organization_id', '=', caller.organizationId).where('id', 'in', wanted).forKeyShare().execute()).map((r) => r.id)
      : [];
    const before = (await tx.selectFrom('monitor_hosts').select('host_id').where('monitor_id', '=', monitor.id).execute()).map((r) => r.host_id).sort();
    const after = [...kept].sort();
    if (JSON.stringify(before) === JSON.stringify(after)) return;
    await tx.deleteFrom('monitor_hosts').where('monitor_id', '=', monitor.id).execute();
    if (after.length) await tx.insertInto('monitor_hosts').values(after.map((h) => ({ monitor_id: monitor.id, host_id: h }))).execute();
    await audit(tx, caller, { action: 'monitor.hosts_set', resourceType: 'monitor', resourceId: monitor.id, workspaceId: monitor.workspace_id,
      changes: { hostIds: { from: before, to: after } } });
  });
  return listMonitorHosts(db, caller, monitor.id);
}
