import type { Outcome } from './kinds/kind';

/** A monitor's check status (paused is a flag beside it, not a check status). */
export type CheckStatus = 'up' | 'degraded' | 'down' | 'pending';

export interface MonitorState { status: CheckStatus; consecutiveFailures: number }

/**
 * The state after one result. A `down` result only turns the monitor down after
 * `confirmations` consecutive failures; until then the previous status holds
 * (a pending monitor stays pending). `degraded` and `up` apply at once and reset
 * the failure count.
 */
export function nextState(prev: MonitorState, outcome: Outcome, confirmations: number): MonitorState {
  if (outcome !== 'down') return { status: outcome, consecutiveFailures: 0 };
  const failures = prev.consecutiveFailures + 1;
  return { status: failures >= Math.max(1, confirmations) ? 'down' : prev.status, consecutiveFailures: failures };
}
