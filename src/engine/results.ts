import { sql } from 'kysely';
import { storable } from '../pipeline/text';
import type { Db } from '../db/connect';
import type { CheckResult } from './kinds/kind';
import { nextState, type CheckStatus } from './state';
import { applyTransitions } from './incidents';
import { ensurePartitionFor } from './partitions';
import { underMaintenance } from '../alerting/maintenance';
import { reschedule } from './claim';

/** What the writer needs of the monitor a result belongs to (as claimed). */
export interface ResultSubject {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  kind: string;
  status: string;
  consecutive_failures: number;
  confirmations: number;
  depends_on: string[];
  interval_seconds: number;
}

type StoredCheck = FinishedCheck & { result: CheckResult };

/** One finished check, ready to store. A null result (nothing to conclude yet) only reschedules. */
export interface FinishedCheck {
  monitor: ResultSubject;
  result: CheckResult | null;
  at: Date;
  /** When the next check is due; null leaves the schedule alone (pings). */
  nextDueAt: Date | null;
  probeId?: string | null;
  /** Heartbeats: the last ping the result was judged from; a newer ping since makes the result stale. */
  judgedPingAt?: Date | null;
}

const DETAIL_KINDS = new Set(['mail_posture', 'tls_audit', 'snmp']);

function hourOf(d: Date): string {
  return new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000).toISOString();
}

function storableResult(r: CheckResult): CheckResult {
  const clean = storable(r);
  return { ...clean, responseTimeMs: typeof clean.responseTimeMs === 'number' && Number.isFinite(clean.responseTimeMs) ? clean.responseTimeMs : null };
}

function readingsOf(r: CheckResult): Record<string, { sum: number; count: number; min: number; max: number; unit: string | null }> | null {
  const out: Record<string, { sum: number; count: number; min: number; max: number; unit: string | null }> = {};
  const readings: unknown = r.detail?.readings;
  for (const x of Array.isArray(readings) ? (readings as { name?: unknown; value?: unknown; unit?: unknown }[]) : []) {
    if (!x || typeof x.name !== 'string' || typeof x.value !== 'number' || !Number.isFinite(x.value)) continue;
    out[x.name] = { sum: x.value, count: 1, min: x.value, max: x.value, unit: typeof x.unit === 'string' ? x.unit : null };
  }
  return Object.keys(out).length ? out : null;
}

/**
 * Stores a batch of results in one transaction: raw rows, hourly and daily
 * roll-ups, each monitor's new state (status after `confirmations`, timings,
 * uptime figures) and, where the status changed, the incident transition.
 */
export async function writeResults(db: Db, given: FinishedCheck[]): Promise<void> {
  // Results carry text from the outside world (a server's answer, a DNS record, a probe): made
  // storable here, so that one NUL byte or odd number never sinks the batch of every other monitor.
  const all = given.map((b) => (b.result ? { ...b, result: storableResult(b.result) } : b));
  const idle = all.filter((b) => b.result === null && b.nextDueAt);
  await reschedule(db, idle.map((b) => ({ id: b.monitor.id, nextDueAt: b.nextDueAt! })));
  let batch = all.filter((b): b is StoredCheck => b.result !== null);
  if (batch.length === 0) return;
  await ensurePartitionFor(db, batch.map((b) => b.at));
  await db.transaction().execute(async (tx) => {
    // A monitor deleted while its check ran takes its history with it: drop its
    // results, and hold the others against deletion until this commits.
    const ids = [...new Set(batch.map((b) => b.monitor.id))];
    const current = await tx.selectFrom('monitors').select(['id', 'last_ping_at']).where('id', 'in', ids).forUpdate().execute();
    const pings = new Map(current.map((r) => [r.id, r.last_ping_at?.getTime() ?? null]));
    const judgedCurrent = (b: StoredCheck) => b.judgedPingAt === undefined || (b.judgedPingAt?.getTime() ?? null) === pings.get(b.monitor.id);
    // A heartbeat judged on a ping that has since been replaced is not stored, but its claim
    // still ends here (otherwise the monitor would wait out the whole lease), and it is judged
    // again within a second on the new ping. (A ping's own result holds no claim: nextDueAt null.)
    const superseded = batch.filter((b) => b.nextDueAt && pings.has(b.monitor.id) && !judgedCurrent(b));
    await reschedule(tx, superseded.map((b) => ({ id: b.monitor.id, nextDueAt: b.nextDueAt! })), 1);
    batch = batch.filter((b) => pings.has(b.monitor.id) && judgedCurrent(b));
    if (batch.length === 0) return;
    await tx.insertInto('check_results').values(batch.map((b) => ({
      monitor_id: b.monitor.id, organization_id: b.monitor.organization_id, at: b.at, outcome: b.result.outcome,
      response_time_ms: b.result.responseTimeMs, cause: b.result.cause, message: b.result.message.slice(0, 1000),
      detail: b.result.detail || b.result.phases ? JSON.stringify({ ...(b.result.detail ?? {}), ...(b.result.phases ? { phases: b.result.phases } : {}) }) : null,
      probe_id: b.probeId ?? null,
    }))).execute();

    const hourly = batch.map((b) => ({
      monitor_id: b.monitor.id, hour: hourOf(b.at), checks: 1, failures: b.result.outcome === 'down' ? 1 : 0,
      degraded: b.result.outcome === 'degraded' ? 1 : 0, response_sum_ms: b.result.responseTimeMs ?? 0,
      response_count: b.result.responseTimeMs === null ? 0 : 1, readings: readingsOf(b.result),
      day: b.at.toISOString().slice(0, 10), downtime: b.result.outcome === 'down' ? b.monitor.interval_seconds : 0,
    }));
    const rows = JSON.stringify(hourly);
    await sql`insert into rollup_hourly (monitor_id, hour, checks, failures, degraded, response_sum_ms, response_count, readings)
      select monitor_id, hour, sum(checks), sum(failures), sum(degraded), sum(response_sum_ms), sum(response_count), null
      from jsonb_to_recordset(${rows}::jsonb) as v(monitor_id text, hour timestamptz, checks int, failures int, degraded int, response_sum_ms float8, response_count int)
      group by monitor_id, hour
      on conflict (monitor_id, hour) do update set checks = rollup_hourly.checks + excluded.checks, failures = rollup_hourly.failures + excluded.failures,
        degraded = rollup_hourly.degraded + excluded.degraded, response_sum_ms = rollup_hourly.response_sum_ms + excluded.response_sum_ms,
        response_count = rollup_hourly.response_count + excluded.response_count`.execute(tx);
    for (const h of hourly) {
      if (!h.readings) continue;
      await sql`update rollup_hourly set readings = vigil_merge_readings(readings, ${JSON.stringify(h.readings)}::jsonb)
        where monitor_id = ${h.monitor_id} and hour = ${h.hour}::timestamptz`.execute(tx);
    }
    await sql`insert into rollup_daily (monitor_id, day, checks, failures, degraded, downtime_seconds, response_sum_ms, response_count)
      select monitor_id, day, sum(checks), sum(failures), sum(degraded), least(sum(downtime), 86400), sum(response_sum_ms), sum(response_count)
      from jsonb_to_recordset(${rows}::jsonb) as v(monitor_id text, day date, checks int, failures int, degraded int, downtime int, response_sum_ms float8, response_count int)
      group by monitor_id, day
      on conflict (monitor_id, day) do update set checks = rollup_daily.checks + excluded.checks, failures = rollup_daily.failures + excluded.failures,
        degraded = rollup_daily.degraded + excluded.degraded, downtime_seconds = least(rollup_daily.downtime_seconds + excluded.downtime_seconds, 86400),
        response_sum_ms = rollup_daily.response_sum_ms + excluded.response_sum_ms, response_count = rollup_daily.response_count + excluded.response_count`.execute(tx);

    // Each monitor's state after its results, in order (a batch may hold two results of one monitor: pings).
    const finals = new Map<string, { last: StoredCheck; status: CheckStatus; failures: number; changedAt: Date | null; from: string }>();
    for (const b of batch) {
      const prev = finals.get(b.monitor.id) ?? { last: b, status: b.monitor.status as CheckStatus, failures: b.monitor.consecutive_failures, changedAt: null, from: b.monitor.status };
      const next = nextState({ status: prev.status, consecutiveFailures: prev.failures }, b.result.outcome, b.monitor.confirmations);
      finals.set(b.monitor.id, {
        last: b, status: next.status, failures: next.consecutiveFailures,
        changedAt: next.status !== prev.status ? b.at : prev.changedAt, from: prev.from,
      });
    }
    const updates = [...finals.values()].map(({ last: b, status, failures, changedAt }) => ({
      id: b.monitor.id, status, failures, status_since: changedAt?.toISOString() ?? null,
      at: b.at.toISOString(), rt: b.result.responseTimeMs, message: b.result.message.slice(0, 1000),
      detail: DETAIL_KINDS.has(b.monitor.kind) && b.result.detail ? b.result.detail : null,
    }));
    await sql`update monitors m set status = v.status, consecutive_failures = v.failures,
        status_since = coalesce(v.status_since, m.status_since), last_checked_at = v.at, last_response_time_ms = v.rt,
        last_message = v.message, last_check_detail = coalesce(v.detail, m.last_check_detail),
        uptime_24h = (select round((100.0 * sum(h.checks - h.failures) / nullif(sum(h.checks), 0))::numeric, 3)::float8
          from rollup_hourly h where h.monitor_id = m.id and h.hour > now() - interval '24 hours'),
        uptime_30d = (select round((100.0 * sum(d.checks - d.failures) / nullif(sum(d.checks), 0))::numeric, 3)::float8
          from rollup_daily d where d.monitor_id = m.id and d.day > (now() at time zone 'UTC')::date - 30)
      from jsonb_to_recordset(${JSON.stringify(updates)}::jsonb)
        as v(id text, status text, failures int, status_since timestamptz, at timestamptz, rt float8, message text, detail jsonb)
      where m.id = v.id`.execute(tx);
    // The next due times of the checks (not of pings, which leave the schedule alone), claims ended.
    const dues = new Map<string, Date>();
    for (const b of batch) if (b.nextDueAt) dues.set(b.monitor.id, b.nextDueAt);
    await reschedule(tx, [...dues].map(([id, nextDueAt]) => ({ id, nextDueAt })));

    // Incident transitions, in order, for monitors whose status moved.
    const moved = [...finals.values()].filter((f) => f.changedAt !== null && f.from !== f.status);
    // One maintenance lookup and one set of incident statements for the whole batch.
    const quiet = moved.length ? new Set((await underMaintenance(tx, moved.map((f) => f.last.monitor.id), new Date())).keys()) : new Set<string>();
    await applyTransitions(tx, moved.map((f) => ({ monitor: f.last.monitor, from: f.from, to: f.status, result: f.last.result, at: f.changedAt! })), quiet);
  });
}
