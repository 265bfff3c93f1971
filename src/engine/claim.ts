import { sql, type Selectable } from 'kysely';
import type { MonitorsTable } from '../db/schema';
import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import type { CheckJob } from './runCheck';

/** A claimed monitor: what a check and the result writer need. */
export type ClaimedMonitor = Pick<Selectable<MonitorsTable>,
  | 'id' | 'organization_id' | 'workspace_id' | 'name' | 'kind' | 'config_enc' | 'status' | 'consecutive_failures'
  | 'confirmations' | 'depends_on' | 'interval_seconds' | 'last_ping_at' | 'last_ping_kind' | 'status_since'> & { next_due_at: Date };

/** The job of a claimed monitor, with its config decrypted (null when it cannot be). */
export function jobOf(m: ClaimedMonitor, secrets: SecretBox): CheckJob {
  const plain = secrets.open(m.config_enc);
  let config: unknown = null;
  try { config = plain === null ? null : JSON.parse(plain); } catch { config = null; }
  return {
    id: m.id, kind: m.kind, config, intervalSeconds: m.interval_seconds,
    lastPingAt: m.last_ping_at, lastPingKind: m.last_ping_kind, statusSince: m.status_since, status: m.status,
  };
}

/**
 * How long a claim holds before another worker may take the monitor again.
 * A worker's claims are short and renewed while their checks run (see
 * worker.ts), so a crashed worker's checks come back within seconds while a
 * long check never loses its monitor to a second run. Private probes work
 * remotely and are not renewed: their claims hold for PROBE_LEASE_SECONDS.
 */
export const WORKER_LEASE_SECONDS = 5;
/** How often a worker renews the claims of its checks in flight (several renewals per lease: a slow event loop is tolerated). */
export const LEASE_RENEW_MS = 1500;
export const PROBE_LEASE_SECONDS = 120;

/**
 * Claims up to `limit` due monitors: enabled, not paused, due, not leased (or
 * lease expired), and run by `probeId` (null: by the server's own workers).
 * `FOR UPDATE SKIP LOCKED` lets any number of workers claim side by side
 * without taking the same monitor twice.
 */
export async function claimDue(db: Db, limit: number, probeId: string | null, now = new Date(), leaseSeconds = probeId === null ? WORKER_LEASE_SECONDS : PROBE_LEASE_SECONDS): Promise<ClaimedMonitor[]> {
  const byProbe = probeId === null ? sql`m.probe_id is null` : sql`m.probe_id = ${probeId}`;
  const { rows } = await sql<ClaimedMonitor>`
    with due as (
      select m.id from monitors m
      where m.enabled and not m.paused and ${byProbe} and m.next_due_at <= ${now}
        and (m.lease_until is null or m.lease_until < ${now})
      order by m.next_due_at
      limit ${limit}
      for update skip locked
    )
    update monitors m set lease_until = ${new Date(now.getTime() + leaseSeconds * 1000)}
    from due where m.id = due.id
    returning m.id, m.organization_id, m.workspace_id, m.name, m.kind, m.config_enc, m.status, m.consecutive_failures,
      m.confirmations, m.depends_on, m.interval_seconds, m.next_due_at, m.last_ping_at, m.last_ping_kind, m.status_since`.execute(db);
  return rows;
}

/** Seconds between two evaluations: the interval, but passive kinds (heartbeats, agents) are evaluated at least every minute so silence shows soon. */
export function cadenceSeconds(kind: string, intervalSeconds: number): number {
  return kind === 'heartbeat' || kind === 'agent' ? Math.min(intervalSeconds, 60) : intervalSeconds;
}

/** When the next check is due: one cadence after the due time, or now when that is already past (missed runs are not replayed). */
export function nextDue(m: Pick<ClaimedMonitor, 'kind' | 'interval_seconds' | 'next_due_at'>, now: Date): Date {
  const next = m.next_due_at.getTime() + cadenceSeconds(m.kind, m.interval_seconds) * 1000;
  return new Date(Math.max(next, now.getTime()));
}

/**
 * Extends the claims on `ids` (checks in flight, results not yet written) by
 * another lease. Monitors whose result was written meanwhile have no lease
 * any more and are left alone; rows a result transaction holds right now are
 * skipped, not waited for (that transaction ends the lease anyway), so the
 * renewal never holds up the writing of results in a mass outage.
 */
export async function renewLeases(db: Db, ids: readonly string[], now = new Date()): Promise<void> {
  if (ids.length === 0) return;
  await sql`update monitors set lease_until = ${new Date(now.getTime() + WORKER_LEASE_SECONDS * 1000)}
    where id in (select id from monitors where id = any(${sql.val([...ids])}::text[]) and lease_until is not null for update skip locked)`.execute(db);
}
