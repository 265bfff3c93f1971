import { kinds, isKind } from './kinds';
import type { AgentState, CheckResult } from './kinds/kind';
import type { NetPolicy } from '../net/policy';
import { checkDeadline } from './deadline';

/** The longest a single check may run before it is cut off as a timeout. */
export const CHECK_DEADLINE_MS = 70_000;

/** One check to run: the same shape on the server's workers and on private probes. */
export interface CheckJob {
  id: string;
  kind: string;
  /** The decrypted config document; null when it could not be decrypted. */
  config: unknown;
  intervalSeconds: number;
  lastPingAt: Date | null;
  lastPingKind: string | null;
  statusSince: Date;
  status: string;
}

/** What only Vigil's own workers can give a check (a probe has none of it). */
export interface LocalSources {
  /** Reads an agent the monitor may watch, with its latest sample (`agent` monitors). */
  readAgent?(agentId: string): Promise<AgentState | null>;
}

/**
 * Runs one check with its kind's code. Never throws: a crash of the check
 * itself is a `down` result with cause `check_failed`.
 */
export async function runCheck(job: CheckJob, net: NetPolicy, stop?: AbortSignal, local: LocalSources = {}): Promise<CheckResult | null> {
  const started = Date.now();
  const deadline = checkDeadline(CHECK_DEADLINE_MS, stop);
  try {
    if (!isKind(job.kind)) return { outcome: 'down', cause: 'check_failed', message: `Unknown monitor kind ${job.kind}.`, responseTimeMs: null };
    if (job.config === null) return { outcome: 'down', cause: 'check_failed', message: 'The monitor configuration cannot be decrypted (was MASTER_KEY changed?).', responseTimeMs: null };
    return await kinds[job.kind].check(job.config, {
      monitorId: job.id,
      intervalSeconds: job.intervalSeconds,
      now: new Date(),
      signal: deadline.signal,
      net,
      heartbeat: job.kind === 'heartbeat'
        ? { lastPingAt: job.lastPingAt, lastPingKind: job.lastPingKind as 'success' | 'fail' | 'start' | null, since: job.statusSince, pending: job.status === 'pending' }
        : undefined,
      agents: job.kind === 'agent' && local.readAgent
        ? { read: local.readAgent, since: job.statusSince, pending: job.status === 'pending' }
        : undefined,
    });
  } catch (e) {
    return { outcome: 'down', cause: 'check_failed', message: `The check failed: ${e instanceof Error ? e.message : String(e)}`, responseTimeMs: Date.now() - started };
  } finally {
    deadline.done();
  }
}
