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
 * Claims are short, so a crashed worker's monitors come back within seconds;
 * a worker renews only the claims about to run out (checks still running or
 * results not yet written, see worker.ts), so a check answered in well under
 * a lease costs no renewal. Private probes work remotely and are not renewed:
 * their claims hold for PROBE_LEASE_SECONDS.
 */
export const WORKER_LEASE_SECONDS = 5;
/** How often a worker looks for claims that are about to run out. */
export const LEASE_RENEW_MS = 1000;
/** A claim is renewed once less than this is left of it (several looks per margin: a slow event loop is tolerated). */
export const LEASE_RENEW_MARGIN_MS = 2500;
export const PROBE_LEASE_SECONDS = 120;

/**
 * Claims up to `limit` due monitors, oldest due first: runnable (enabled, not
 * paused), due, not claimed (or the claim ran out), and run by `probeId`
 * (null: by the server's own workers). `FOR UPDATE SKIP LOCKED` lets any
 * number of workers claim side by side without taking the same monitor
 * twice. Only `monitor_schedule` is written (migration 0031 says why).
 */
export async function claimDue(db: Db, limit: number, probeId: string | null, now = new Date(), leaseSeconds = probeId === null ? WORKER_LEASE_SECONDS : PROBE_LEASE_SECONDS): Promise<ClaimedMonitor[]> {
  const byProbe = probeId === null ? sql`s.probe_id is null` : sql`s.probe_id = ${probeId}`;
  const { rows } = await sql<ClaimedMonitor>`
    with due as (
      select s.monitor_id from monitor_schedule s
      where s.runnable and ${byProbe} and s.next_due_at <= ${now}
        and (s.lease_until is null or s.lease_until < ${now})
      order by s.next_due_at
      limit ${limit}
      for update skip locked
    ), claimed as (
      update monitor_schedule s set lease_until = ${new Date(now.getTime() + leaseSeconds * 1000)}
      from due where s.monitor_id = due.monitor_id
      returning s.monitor_id, s.next_due_at
    )
    select m.id, m.organization_id, m.workspace_id, m.name, m.kind, m.config_enc, m.status, m.consecutive_failures,
      m.confirmations, m.depends_on, m.interval_seconds, c.next_due_at, m.last_ping_at, m.last_ping_kind, m.status_since
    from claimed c join monitors m on m.id = c.monitor_id
    order by c.next_due_at`.execute(db);
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
 * another lease, in one statement. Monitors whose result was written
 * meanwhile have no claim any more and are left alone; rows a result
 * transaction holds right now are skipped, not waited for (that transaction
 * ends the claim anyway), so renewal never holds up the writing of results.
 */
export async function renewLeases(db: Db, ids: readonly string[], now = new Date()): Promise<void> {
  if (ids.length === 0) return;
  await sql`update monitor_schedule set lease_until = ${new Date(now.getTime() + WORKER_LEASE_SECONDS * 1000)}
    where monitor_id in (select monitor_id from monitor_schedule
      where monitor_id = any(${sql.val([...ids])}::text[]) and lease_until is not null for update skip locked)`.execute(db);
}

/** Ends the claims on `ids` without a result (checks cut short): another worker takes them at once. */
export async function releaseClaims(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`update monitor_schedule set lease_until = null where monitor_id = any(${sql.val([...ids])}::text[])`.execute(db);
}

/**
 * Sets when each of `items` is next due and ends its claim, in one
 * statement. `soonest` brings them due no later than that many seconds
 * from now (a heartbeat judged on a ping since replaced).
 */
export async function reschedule(db: Db, items: readonly { id: string; nextDueAt: Date }[], soonestSeconds?: number): Promise<void> {
  if (items.length === 0) return;
  const next = soonestSeconds === undefined ? sql`v.next_due` : sql`least(v.next_due, now() + make_interval(secs => ${soonestSeconds}))`;
  await sql`update monitor_schedule s set next_due_at = ${next}, lease_until = null
    from jsonb_to_recordset(${JSON.stringify(items.map((b) => ({ id: b.id, next_due: b.nextDueAt.toISOString() })))}::jsonb)
      as v(id text, next_due timestamptz) where s.monitor_id = v.id`.execute(db);
}
