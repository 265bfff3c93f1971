import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/connect';
import type { AgentSamplesTable } from '../db/schema';
import type { AgentState } from '../engine/kinds/kind';
import { FIGURES } from '../ingest/agentReport';
import { isoText } from './monitors';
import { workspaceFilter } from './scope';

/** Whose agents a read may see: an organisation, and a confined key's workspaces (organisation-wide agents always). */
export interface AgentScope { organizationId: string; workspaceIds: readonly string[] | null }

/** The agents of a scope, with the read columns (timestamps as RFC 3339 text), by name. */
export function selectAgents(db: Db, scope: AgentScope) {
  let q = db.selectFrom('agents')
    .select(['id', 'name', 'workspace_id', 'hostname', 'os', 'version', isoText('last_seen_at').as('last_seen_at'), isoText('created_at').as('created_at')])
    .where('organization_id', '=', scope.organizationId);
  const ws = workspaceFilter(scope.workspaceIds);
  if (ws) q = q.where((eb) => eb.or([eb('workspace_id', 'is', null), eb('workspace_id', 'in', ws)]));
  return q.orderBy('name').orderBy('id');
}

export type AgentRow = Awaited<ReturnType<ReturnType<typeof selectAgents>['execute']>>[number];

type SampleRow = Selectable<AgentSamplesTable>;

/** A stored sample in the API's shape (`AgentSample`). */
export function sampleOut(r: SampleRow) {
  const figures = Object.fromEntries(FIGURES.map(([name, column]) => [name, r[column] === null ? null : Number(r[column])]));
  const disks = Array.isArray(r.disks) ? (r.disks as { mount: string; filesystem: string; type: string | null; sizeBytes: number; usedBytes: number; percent: number }[]) : [];
  return { at: r.at.toISOString(), ...figures, disks } as { at: string; disks: typeof disks } & Record<(typeof FIGURES)[number][0], number | null>;
}

/** An agent's samples taken in `[from, now]`, newest first, at most `limit`. */
export async function selectSamples(db: Db, agentId: string, from: Date, limit: number): Promise<SampleRow[]> {
  return db.selectFrom('agent_samples').selectAll().where('agent_id', '=', agentId).where('at', '>=', from)
    .orderBy('at', 'desc').limit(limit).execute();
}

/** An agent's hourly roll-ups from `from`'s hour on, newest first. */
export async function selectHours(db: Db, agentId: string, from: Date) {
  return db.selectFrom('agent_rollup_hourly').select(['hour', 'samples', 'figures']).where('agent_id', '=', agentId)
    .where('hour', '>=', new Date(Math.floor(from.getTime() / 3_600_000) * 3_600_000)).orderBy('hour', 'desc').execute();
}

/** The API shape of an hour (`AgentHour`): each figure's average, minimum, maximum, sum and count, or null when no sample had it. */
export function hourOut(r: { hour: Date; samples: number; figures: Record<string, { sum: number; count: number; min: number; max: number }> }) {
  const stats = (f: { sum: number; count: number; min: number; max: number } | undefined) =>
    (f && f.count > 0 ? { avg: Number(f.sum) / Number(f.count), min: Number(f.min), max: Number(f.max), sum: Number(f.sum), count: Number(f.count) } : null);
  const figures = Object.fromEntries(FIGURES.map(([name]) => [name, stats(r.figures[name])]));
  return { hour: r.hour.toISOString(), samples: r.samples, ...figures } as { hour: string; samples: number } & Record<(typeof FIGURES)[number][0], ReturnType<typeof stats>>;
}

/** The place a monitor watches from: its organisation and workspace. */
export interface MonitorPlace { organizationId: string; workspaceId: string }

/** The id of agent `agentId` when a monitor of `place` may watch it (organisation-wide, or of the monitor's workspace), else null. */
export async function watchableAgent(db: Db, place: MonitorPlace, agentId: string): Promise<string | null> {
  const row = await db.selectFrom('agents').select('id').where('id', '=', agentId).where('organization_id', '=', place.organizationId)
    .where((eb) => eb.or([eb('workspace_id', 'is', null), eb('workspace_id', '=', place.workspaceId)])).executeTakeFirst();
  return row?.id ?? null;
}

/** Agent `agentId` as a monitor of `place` sees it, with its newest sample; null when it may not watch it (or it is gone). */
export async function agentState(db: Db, place: MonitorPlace, agentId: string): Promise<AgentState | null> {
  const { rows } = await sql<SampleRow & { name: string; created_at: Date; last_seen_at: Date | null; interval_seconds: number | null; sample_at: Date | null }>`
    select a.name, a.created_at, a.last_seen_at, a.interval_seconds, s.*, s.at as sample_at
    from agents a left join lateral (select * from agent_samples x where x.agent_id = a.id order by x.at desc limit 1) s on true
    where a.id = ${agentId} and a.organization_id = ${place.organizationId}
      and (a.workspace_id is null or a.workspace_id = ${place.workspaceId})`.execute(db);
  const r = rows[0];
  if (!r) return null;
  let sample: AgentState['sample'] = null;
  if (r.sample_at) {
    const { at: _at, disks, ...figures } = sampleOut({ ...r, at: r.sample_at });
    sample = { at: r.sample_at, figures, disks: disks.map((d) => ({ mount: d.mount, percent: Number(d.percent) })) };
  }
  return { name: r.name, createdAt: r.created_at, lastSeenAt: r.last_seen_at, intervalSeconds: r.interval_seconds, sample };
}

/**
 * Removes samples and hourly roll-ups older than their organisation's plan
 * history retention (as check results are), `now` being the time it runs.
 */
export async function deleteExpiredSamples(db: Db, now: Date): Promise<void> {
  await sql`delete from agent_samples s using agents a, organizations o, plans p
    where s.agent_id = a.id and a.organization_id = o.id and p.code = o.plan
      and s.at < ${now}::timestamptz - make_interval(days => p.history_retention_days)`.execute(db);
  await sql`delete from agent_rollup_hourly r using agents a, organizations o, plans p
    where r.agent_id = a.id and a.organization_id = o.id and p.code = o.plan
      and r.hour < ${now}::timestamptz - make_interval(days => p.history_retention_days)`.execute(db);
}
