import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import { hashToken, newToken } from '../crypto/tokens';
import { writeResults } from './results';

export type PingKind = 'success' | 'fail' | 'start';

/** A new heartbeat token: sealed (to show the ping URL again) and hashed (to find the monitor by it). */
export function newHeartbeatToken(secrets: SecretBox): { token: string; enc: string; hash: Buffer } {
  const { token } = newToken('hb');
  return { token, enc: secrets.seal(token), hash: hashToken(token) };
}

/**
 * Records a ping. A success ping makes the monitor up at once and a `/fail`
 * ping down (cause heartbeat_failed); `/start` only says the job began. A
 * paused or disabled monitor records the ping and changes nothing else.
 * Returns false for a token that matches no monitor.
 */
export async function recordPing(db: Db, token: string, kind: PingKind, now = new Date()): Promise<boolean> {
  if (!/^hb_[A-Za-z0-9_-]{43}$/.test(token)) return false;
  const m = await db.selectFrom('monitors')
    .select(['id', 'organization_id', 'workspace_id', 'name', 'kind', 'status', 'consecutive_failures', 'confirmations', 'depends_on', 'interval_seconds', 'paused', 'enabled'])
    .where('heartbeat_token_hash', '=', hashToken(token)).executeTakeFirst();
  if (!m) return false;
  if (kind === 'start') return true;
  await db.updateTable('monitors').set({ last_ping_at: now, last_ping_kind: kind }).where('id', '=', m.id).execute();
  if (m.paused || !m.enabled) return true;
  await writeResults(db, [{
    monitor: m,
    at: now,
    nextDueAt: null,
    judgedPingAt: now,
    result: kind === 'success'
      ? { outcome: 'up', cause: null, message: 'Ping received.', responseTimeMs: null }
      : { outcome: 'down', cause: 'heartbeat_failed', message: 'The job reported a failure.', responseTimeMs: null },
  }]);
  return true;
}
