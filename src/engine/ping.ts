import { sql } from 'kysely';
import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import { hashToken, newToken } from '../crypto/tokens';
import { writeResults, type FinishedCheck, type ResultSubject } from './results';
import { nextState, type CheckStatus } from './state';

export type PingKind = 'success' | 'fail' | 'start';

/** A new heartbeat token: sealed (to show the ping URL again) and hashed (to find the monitor by it). */
export function newHeartbeatToken(secrets: SecretBox): { token: string; enc: string; hash: Buffer } {
  const { token } = newToken('hb');
  return { token, enc: secrets.seal(token), hash: hashToken(token) };
}

/** The hash a ping token is found by, or null for a string that cannot be a token. */
export function pingTokenHash(token: string): Buffer | null {
  return /^hb_[A-Za-z0-9_-]{43}$/.test(token) ? hashToken(token) : null;
}

/** An accepted ping (success or fail: `/start` changes nothing and is not kept), in the order it was appended. */
export interface AcceptedPing { seq: number; monitor_id: string; kind: string; at: Date }

type PingedMonitor = ResultSubject & { paused: boolean; enabled: boolean; won: boolean; last_checked_at: Date | null };

/**
 * How often a success ping of a monitor that is up (no failures counted) is
 * stored as a result. Its last ping is always kept; what a result more would
 * add is a row of history saying the same again, and a job pinging many
 * times a second would otherwise write a result per drained batch.
 */
export const QUIET_RESULT_MS = 10_000;

/**
 * Applies accepted pings set-wise. Per monitor the latest ping wins: it
 * becomes `last_ping_at`/`last_ping_kind` (never moved back: a drain in
 * another worker may have applied a newer one), and unless the monitor is
 * paused or disabled it is one result — success up, fail down
 * (heartbeat_failed). Earlier pings of the same monitor in the batch count
 * only through it, as a ping overtaken by a newer one always has (see
 * judgedPingAt). The results that move a monitor's status are written first,
 * in one transaction for the whole batch; then those that do not, in
 * another, except a success ping of a monitor already up whose last result
 * is under QUIET_RESULT_MS old. Pings of monitors deleted meanwhile are
 * dropped.
 */
export async function applyPings(db: Db, pings: readonly AcceptedPing[], dropped: (monitorId: string, e: unknown) => void = () => undefined): Promise<void> {
  const latest = new Map<string, AcceptedPing>();
  for (const p of pings) {
    if (p.kind !== 'success' && p.kind !== 'fail') continue;
    const l = latest.get(p.monitor_id);
    if (!l || p.at.getTime() > l.at.getTime() || (p.at.getTime() === l.at.getTime() && p.seq > l.seq)) latest.set(p.monitor_id, p);
  }
  if (latest.size === 0) return;
  const given = JSON.stringify([...latest.values()].map((p) => ({ id: p.monitor_id, kind: p.kind, at: p.at.toISOString() })));
  const { rows } = await sql<PingedMonitor>`update monitors m set
        last_ping_at = case when m.last_ping_at is null or m.last_ping_at <= v.at then v.at else m.last_ping_at end,
        last_ping_kind = case when m.last_ping_at is null or m.last_ping_at <= v.at then v.kind else m.last_ping_kind end
      from jsonb_to_recordset(${given}::jsonb) as v(id text, kind text, at timestamptz)
      where m.id = v.id
      returning m.id, m.organization_id, m.workspace_id, m.name, m.kind, m.status, m.consecutive_failures, m.confirmations,
        m.depends_on, m.interval_seconds, m.paused, m.enabled, m.last_checked_at, m.last_ping_at = v.at as won`.execute(db);
  const moves: FinishedCheck[] = [];
  const stays: FinishedCheck[] = [];
  for (const m of rows) {
    // A paused or disabled monitor only records the ping; one a newer ping overtook is judged on that one.
    if (m.paused || !m.enabled || !m.won) continue;
    const p = latest.get(m.id)!;
    const up = p.kind === 'success';
    if (up && m.status === 'up' && m.consecutive_failures === 0 && m.last_checked_at && p.at.getTime() - m.last_checked_at.getTime() < QUIET_RESULT_MS) continue;
    const { paused: _p, enabled: _e, won: _w, last_checked_at: _c, ...monitor } = m;
    const check: FinishedCheck = {
      monitor, at: p.at, nextDueAt: null, judgedPingAt: p.at,
      result: up
        ? { outcome: 'up', cause: null, message: 'Ping received.', responseTimeMs: null }
        : { outcome: 'down', cause: 'heartbeat_failed', message: 'The job reported a failure.', responseTimeMs: null },
    };
    const next = nextState({ status: m.status as CheckStatus, consecutiveFailures: m.consecutive_failures }, check.result!.outcome, m.confirmations);
    (next.status !== m.status ? moves : stays).push(check);
  }
  // A status change does not wait for the results of the monitors that stay as they were.
  await writeChecks(db, moves, dropped);
  await writeChecks(db, stays, dropped);
}

/**
 * One transaction for the batch; if the database refuses it, monitor by
 * monitor, so one bad row cannot hold back the others (those refused again
 * are reported to `dropped`).
 */
async function writeChecks(db: Db, checks: FinishedCheck[], dropped: (monitorId: string, e: unknown) => void): Promise<void> {
  if (checks.length === 0) return;
  try {
    await writeResults(db, checks);
  } catch (e) {
    if (checks.length === 1) throw e;
    let written = 0;
    const refused: [string, unknown][] = [];
    for (const c of checks) {
      try { await writeResults(db, [c]); written++; } catch (err) { refused.push([c.monitor.id, err]); }
    }
    // Nothing went through (the database is away, not one row): hand the batch back to be retried.
    if (written === 0) throw refused[0][1];
    for (const [id, err] of refused) dropped(id, err);
  }
}
