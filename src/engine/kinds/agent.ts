import type { AgentState, CheckContext, CheckKind, CheckResult } from './kind';

/** The figures a threshold may name (the `AgentSample` fields of the API), with the unit shown in messages. */
export const AGENT_METRICS = {
  cpuPercent: '%', memoryPercent: '%', memoryUsedBytes: ' bytes', swapPercent: '%', diskPercent: '%',
  load1: '', load5: '', load15: '', networkRxBytesPerSecond: ' bytes/s', networkTxBytesPerSecond: ' bytes/s',
} as const;

type Metric = keyof typeof AGENT_METRICS;
type Operator = 'gt' | 'gte' | 'lt' | 'lte';

interface AgentConfig {
  agentId: string;
  metric?: Metric;
  operator?: Operator;
  threshold?: number;
  warning?: number;
  mount?: string;
  missedReports?: number;
}

/** Slack on top of the missed reports, for the sampling, the post and the drain. */
const SLACK_MS = 5_000;
/** The interval assumed of an agent that has not said its own yet (the agent program's default). */
const DEFAULT_AGENT_INTERVAL = 30;

const WORDS: Record<Operator, string> = { gt: 'above', gte: 'at or above', lt: 'below', lte: 'at or below' };

function crosses(value: number, operator: Operator, limit: number): boolean {
  switch (operator) {
    case 'gt': return value > limit;
    case 'gte': return value >= limit;
    case 'lt': return value < limit;
    case 'lte': return value <= limit;
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

/** The watched figure of the latest sample, and how to name it; null value when the sample lacks it. */
function reading(c: AgentConfig, sample: NonNullable<AgentState['sample']>): { value: number | null; what: string } {
  if (c.metric === 'diskPercent' && c.mount !== undefined) {
    const disk = sample.disks.find((d) => d.mount === c.mount);
    return { value: disk ? disk.percent : null, what: `disk ${c.mount}` };
  }
  return { value: sample.figures[c.metric!] ?? null, what: c.metric! };
}

/** Down when the agent has been silent too long; null when it is not (yet) late. */
function silence(c: AgentConfig, agent: AgentState, ctx: CheckContext): CheckResult | null {
  const a = ctx.agents!;
  const interval = agent.intervalSeconds ?? DEFAULT_AGENT_INTERVAL;
  const missed = c.missedReports ?? 3;
  const windowMs = missed * interval * 1000 + SLACK_MS;
  // A monitor (re)starting gets a whole window from that moment, as a heartbeat does.
  let since = agent.lastSeenAt ?? agent.createdAt;
  if (a.pending && since < a.since) since = a.since;
  if (ctx.now.getTime() - since.getTime() <= windowMs) return null;
  const what = agent.lastSeenAt ? `No report from agent ${agent.name} since ${agent.lastSeenAt.toISOString()}` : `Agent ${agent.name} has never reported`;
  return { outcome: 'down', cause: 'heartbeat_missed', message: `${what} (it reports every ${interval} s; ${missed} missed).`, responseTimeMs: null };
}

/**
 * Thresholds on a server agent's samples (docs/agents.md). Passive, like a
 * heartbeat: the check reads the agent's latest report from the database
 * rather than the network, so it runs on Vigil's own workers only. Down
 * (`heartbeat_missed`) when the agent has sent nothing for `missedReports`
 * of its intervals (plus a few seconds); otherwise, with a `metric`, down
 * (`assertion_failed`) while the newest sample crosses `threshold`,
 * degraded while it crosses `warning` only, up otherwise.
 */
export const agent: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['agentId'],
    properties: {
      agentId: { type: 'string', minLength: 1, maxLength: 100 },
      metric: { enum: Object.keys(AGENT_METRICS) },
      operator: { enum: ['gt', 'gte', 'lt', 'lte'] },
      threshold: { type: 'number' },
      warning: { type: 'number' },
      mount: { type: 'string', minLength: 1, maxLength: 255 },
      missedReports: { type: 'integer', minimum: 1, maximum: 100, default: 3 },
    },
  },
  sealedFields: [],
  hasPingUrl: false,

  checkConfig(c: AgentConfig) {
    if (c.metric === undefined) {
      for (const f of ['threshold', 'warning', 'operator', 'mount'] as const) {
        if (c[f] !== undefined) return { field: `config.${f}`, reason: 'needs a metric' };
      }
      return null;
    }
    if (c.threshold === undefined) return { field: 'config.threshold', reason: 'is required with a metric' };
    if (c.mount !== undefined && c.metric !== 'diskPercent') return { field: 'config.mount', reason: 'applies to diskPercent only' };
    if (c.warning !== undefined) {
      const op = c.operator ?? 'gt';
      // The warning must be crossed before the threshold is: below it for gt/gte, above it for lt/lte.
      const nearSide = op === 'gt' || op === 'gte' ? c.warning < c.threshold : c.warning > c.threshold;
      if (!nearSide) return { field: 'config.warning', reason: `must be ${op === 'gt' || op === 'gte' ? 'below' : 'above'} the threshold` };
    }
    return null;
  },

  async check(c: AgentConfig, ctx) {
    if (!ctx.agents) {
      return { outcome: 'down', cause: 'check_failed', message: 'Agent monitors are judged by Vigil from the agent\'s reports, not by a probe.', responseTimeMs: null };
    }
    const state = await ctx.agents.read(c.agentId);
    if (!state) return { outcome: 'down', cause: 'check_failed', message: `No agent ${c.agentId} for this monitor (was it deleted?).`, responseTimeMs: null };
    const silent = silence(c, state, ctx);
    if (silent) return silent;
    if (!state.sample) return null;
    if (c.metric === undefined) {
      return { outcome: 'up', cause: null, message: `Agent ${state.name} reported at ${state.lastSeenAt?.toISOString() ?? state.sample.at.toISOString()}.`, responseTimeMs: null };
    }
    const { value, what } = reading(c, state.sample);
    const unit = AGENT_METRICS[c.metric];
    const op = c.operator ?? 'gt';
    if (value === null) {
      return { outcome: 'down', cause: 'check_failed', message: `Agent ${state.name} did not report ${what} in its latest sample.`, responseTimeMs: null };
    }
    const shown = `${state.name}: ${what} ${round(value)}${unit}`;
    if (crosses(value, op, c.threshold!)) {
      return { outcome: 'down', cause: 'assertion_failed', message: `${shown}, ${WORDS[op]} the threshold of ${c.threshold}${unit}.`, responseTimeMs: null };
    }
    if (c.warning !== undefined && crosses(value, op, c.warning)) {
      return { outcome: 'degraded', cause: 'assertion_failed', message: `${shown}, ${WORDS[op]} the warning level of ${c.warning}${unit}.`, responseTimeMs: null };
    }
    return { outcome: 'up', cause: null, message: `${shown} (down ${WORDS[op]} ${c.threshold}${unit}).`, responseTimeMs: null };
  },
};
