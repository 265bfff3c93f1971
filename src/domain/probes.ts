import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashToken, newToken, sameHash, tokenPrefix } from '../crypto/tokens';
import { isoText } from '../repo/monitors';
import { OperatorError } from './organizations';

/** Creates a private probe for an organisation; the token is returned only here. */
export async function createProbe(db: Db, organizationId: string, name: string) {
  if (!name.trim()) throw new OperatorError('the probe needs a name');
  const org = await db.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
  if (!org) throw new OperatorError(`no organisation ${organizationId}`);
  const { token, prefix } = newToken('pr');
  const id = newId('prb');
  await db.insertInto('probes').values({ id, organization_id: organizationId, name: name.trim(), prefix, token_hash: hashToken(token) }).execute();
  return { probeId: id, token };
}

/** Revokes a probe: it receives no more work and its token stops working. */
export async function revokeProbe(db: Db, probeId: string) {
  const r = await db.updateTable('probes').set({ revoked_at: new Date() }).where('id', '=', probeId).where('revoked_at', 'is', null).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw new OperatorError(`no active probe ${probeId}`);
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

/** Probes of the caller's organisation with how many visible monitors each runs. Probes have no region. */
export async function listProbes(db: Db, caller: Caller) {
  const ws = caller.workspaceIds;
  const rows = await db.selectFrom('probes as p')
    .select([
      'p.id', 'p.name', 'p.version', 'p.hostname', 'p.revoked_at',
      isoText('p.last_seen_at').as('last_seen_at'), isoText('p.created_at').as('created_at'),
      sql<number>`(select count(*) from monitors m where m.probe_id = p.id
        ${ws === null ? sql`` : sql`and m.workspace_id = any(${ws.length ? [...ws] : ['']})`})::int`.as('monitor_count'),
    ])
    .where('p.organization_id', '=', caller.organizationId).orderBy('p.created_at').orderBy('p.id').execute();
  return rows.map((p) => ({
    id: p.id, name: p.name, lastSeenAt: p.last_seen_at, version: p.version, hostname: p.hostname,
    monitorCount: p.monitor_count, revoked: p.revoked_at !== null, createdAt: p.created_at,
  }));
}
