/**
 * Private probes: created, renamed and revoked through the API (POST, PATCH,
 * DELETE /probes) or by the operator's CLI (`probe create`, `probe revoke`);
 * both go through the same writes below, each with its audit entry.
 *
 * A probe's token is shown once, when it is created; only its SHA-256 is
 * kept (`token_hash`, with `prefix` to find the row). It is never logged,
 * audited, exported or searched.
 *
 * Tenancy: a probe belongs to the whole organisation (any workspace's
 * monitors may run on it), so a caller confined to workspaces sees probes
 * but cannot create, rename or revoke one (403 `workspace_confined`).
 */
import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashToken, newToken, sameHash, tokenPrefix } from '../crypto/tokens';
import { invalid, notFound } from '../pipeline/errors';
import { isoText } from '../repo/monitors';
import { audit, diff, type AuditActor } from './audit';
import { OperatorError } from './organizations';

/** The most characters a probe's name may have (as an agent's). */
export const PROBE_NAME_MAX = 100;

/** What a probe's audit entries record: never its token or hash. */
const AUDITED = ['name'];

/** How the CLI appears in the audit log of the organisation it changed. */
const operator = (organizationId: string): AuditActor => ({ organizationId, actor: { type: 'system', id: 'cli', name: 'Operator (command line)' } });

/** A trimmed name, or why it cannot be one. */
function nameProblem(name: string): string | null {
  const t = name.trim();
  if (!t) return 'must not be blank';
  if ([...t].length > PROBE_NAME_MAX) return `must be at most ${PROBE_NAME_MAX} characters`;
  return null;
}

/** Inserts a probe with a new token (only its hash stored) and the audit entry, in one transaction. */
async function insertProbe(db: Db, by: AuditActor, name: string): Promise<{ probeId: string; token: string }> {
  const { token, prefix } = newToken('pr');
  const id = newId('prb');
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('probes').values({ id, organization_id: by.organizationId, name, prefix, token_hash: hashToken(token) }).execute();
    await audit(tx, by, { action: 'probe.created', resourceType: 'probe', resourceId: id, workspaceId: null, changes: diff(null, { name }, AUDITED) });
  });
  return { probeId: id, token };
}

/**
 * Marks a probe revoked (its token stops working at the next request) with
 * the audit entry; false when it already was. Its monitors keep `probe_id`:
 * nothing claims them any more (src/engine/claim.ts claims a probe's monitors
 * only for that probe).
 */
async function markRevoked(db: Db, by: AuditActor, probeId: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const row = await tx.updateTable('probes').set({ revoked_at: new Date() })
      .where('id', '=', probeId).where('organization_id', '=', by.organizationId).where('revoked_at', 'is', null)
      .returning(['name']).executeTakeFirst();
    if (!row) return false;
    await audit(tx, by, { action: 'probe.revoked', resourceType: 'probe', resourceId: probeId, workspaceId: null,
      changes: { revoked: { from: false, to: true } } });
    return true;
  });
}

/** CLI: creates a private probe for an organisation; the token is returned only here. */
export async function createProbe(db: Db, organizationId: string, name: string) {
  const problem = nameProblem(name);
  if (problem) throw new OperatorError(`the probe's name ${problem}`);
  const org = await db.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
  if (!org) throw new OperatorError(`no organisation ${organizationId}`);
  return insertProbe(db, operator(organizationId), name.trim());
}

/** CLI: revokes a probe: it receives no more work and its token stops working. */
export async function revokeProbe(db: Db, probeId: string) {
  const probe = await db.selectFrom('probes').select(['organization_id']).where('id', '=', probeId).executeTakeFirst();
  if (!probe || !(await markRevoked(db, operator(probe.organization_id), probeId))) throw new OperatorError(`no active probe ${probeId}`);
  return { probeId, revoked: true };
}

/** The probe a token belongs to, when it is valid and not revoked. */
export async function probeByToken(db: Db, token: string | undefined) {
  const prefix = token ? tokenPrefix(token) : null;
  if (!token || !prefix?.startsWith('pr_')) return null;
  const hash = hashToken(token);
  const rows = await db.selectFrom('probes').selectAll().where('prefix', '=', prefix).where('revoked_at', 'is', null).execute();
  return rows.find((r) => sameHash(r.token_hash, hash)) ?? null;
}

/**
 * Probes of the caller's organisation (or the one `id`) with how many
 * monitors the caller sees each runs. Probes have no region.
 */
async function selectProbes(db: Db, caller: Caller, id?: string) {
  const ws = caller.workspaceIds;
  let q = db.selectFrom('probes as p')
    .select([
      'p.id', 'p.name', 'p.version', 'p.hostname', 'p.revoked_at',
      isoText('p.last_seen_at').as('last_seen_at'), isoText('p.created_at').as('created_at'),
      sql<number>`(select count(*) from monitors m where m.probe_id = p.id
        ${ws === null ? sql`` : sql`and m.workspace_id = any(${ws.length ? [...ws] : ['']})`})::int`.as('monitor_count'),
    ])
    .where('p.organization_id', '=', caller.organizationId);
  if (id !== undefined) q = q.where('p.id', '=', id);
  const rows = await q.orderBy('p.created_at').orderBy('p.id').execute();
  return rows.map((p) => ({
    id: p.id, name: p.name, lastSeenAt: p.last_seen_at, version: p.version, hostname: p.hostname,
    monitorCount: p.monitor_count, revoked: p.revoked_at !== null, createdAt: p.created_at,
  }));
}

/** GET /probes. */
export async function listProbes(db: Db, caller: Caller) {
  return selectProbes(db, caller);
}

/** One probe of the caller's organisation as the API shows it, or 404 naming `id`. */
async function findProbe(db: Db, caller: Caller, id: string) {
  const [probe] = await selectProbes(db, caller, id);
  if (!probe) throw notFound('probe', 'id');
  return probe;
}

/** POST /probes: a new probe, with its token in this answer only. */
export async function createProbeFor(db: Db, caller: Caller, input: { name: string }) {
  const problem = nameProblem(input.name);
  if (problem) throw invalid('name', problem);
  requireWholeOrganisation(caller, 'agent:enroll', 'create a private probe, which belongs to the whole organisation');
  const { probeId, token } = await insertProbe(db, caller, input.name.trim());
  return { ...(await findProbe(db, caller, probeId)), token };
}

/** PATCH /probes/{id}: renames a probe (revoked or not); the same name changes nothing. */
export async function renameProbe(db: Db, caller: Caller, id: string, input: { name: string }) {
  const problem = nameProblem(input.name);
  if (problem) throw invalid('name', problem);
  const before = await findProbe(db, caller, id);
  requireWholeOrganisation(caller, 'agent:enroll', 'rename a private probe, which belongs to the whole organisation');
  const name = input.name.trim();
  if (name !== before.name) {
    await db.transaction().execute(async (tx) => {
      const r = await tx.updateTable('probes').set({ name }).where('id', '=', id).where('organization_id', '=', caller.organizationId).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return;
      await audit(tx, caller, { action: 'probe.updated', resourceType: 'probe', resourceId: id, workspaceId: null,
        changes: diff({ name: before.name }, { name }, AUDITED) });
    });
  }
  return findProbe(db, caller, id);
}

/** DELETE /probes/{id}: revokes a probe (idempotent) and answers it as it now is. */
export async function revokeProbeFor(db: Db, caller: Caller, id: string) {
  await findProbe(db, caller, id);
  requireWholeOrganisation(caller, 'agent:delete', 'revoke a private probe, which belongs to the whole organisation');
  await markRevoked(db, caller, id);
  return findProbe(db, caller, id);
}
