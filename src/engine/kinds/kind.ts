/** A JSON Schema object (draft 2020-12) for a kind's config document. */
export type ConfigSchema = Record<string, unknown>;

import type { NetPolicy } from '../../net/policy';

/** What one check concluded. `degraded` is a soft failure (documented per kind). */
export type Outcome = 'up' | 'degraded' | 'down';

/** Why a check failed; becomes the incident's `cause`. */
export type FailureCause =
  | 'check_failed' | 'timeout' | 'connection_failed' | 'dns_failure' | 'tls_error' | 'assertion_failed'
  | 'heartbeat_missed' | 'heartbeat_failed';

/** One finding of a posture or TLS check; `code` is stable once shipped. */
export interface Finding { code: string; severity: 'info' | 'warning' | 'critical'; message: string }

/** One SNMP (or other) reading; `unit` null means a raw series with no known scale. */
export interface Reading { name: string; oid: string | null; value: number | null; text: string | null; unit: string | null }

/** `lastCheckDetail` of mail_posture, tls_audit and snmp monitors. */
export interface CheckDetail { findings: Finding[]; grade: string | null; readings: Reading[] }

/** The result of one check run. */
export interface CheckResult {
  outcome: Outcome;
  /** Set whenever outcome is not `up`. */
  cause: FailureCause | null;
  /** One line for people: "HTTP 200 in 84 ms", "connection refused", "SPF record missing". */
  message: string;
  responseTimeMs: number | null;
  /** HTTP timing phases, in milliseconds from the start of the check. */
  phases?: { dnsMs: number | null; connectMs: number | null; tlsMs: number | null; firstByteMs: number | null };
  /** For mail_posture, tls_audit and snmp. */
  detail?: CheckDetail;
}

/** What a check may know besides its config. */
export interface CheckContext {
  monitorId: string;
  intervalSeconds: number;
  now: Date;
  /** Aborted when the check's time is up or the worker stops. */
  signal: AbortSignal;
  /** The one seam for outbound network access (private-address policy, extra CAs). */
  net: NetPolicy;
  /**
   * Heartbeat monitors: what the ping endpoint has recorded. `since` is when the
   * current status began; `pending` is true while monitoring has (re)started and
   * nothing has been concluded yet (new or just unpaused).
   */
  heartbeat?: { lastPingAt: Date | null; lastPingKind: 'success' | 'fail' | 'start' | null; since: Date; pending: boolean };
  /**
   * `agent` monitors, on Vigil's own workers only (a probe has no database):
   * reads an agent the monitor may watch (of its organisation, organisation-
   * wide or of its workspace) with its latest sample. `since` and `pending`
   * as for heartbeats.
   */
  agents?: { read(agentId: string): Promise<AgentState | null>; since: Date; pending: boolean };
}

/** An agent as its reports left it (docs/agents.md). */
export interface AgentState {
  name: string;
  createdAt: Date;
  /** When its latest report arrived; null before the first. */
  lastSeenAt: Date | null;
  /** Seconds between its samples, as it reports it. */
  intervalSeconds: number | null;
  /** Its newest sample (by time taken): the figures by their API names, and each filesystem's use. */
  sample: { at: Date; figures: Record<string, number | null>; disks: { mount: string; percent: number }[] } | null;
}

/** One monitor kind: its config contract and how to check it. */
export interface CheckKind {
  /** JSON Schema of the kind's `config` document; defaults are filled in on create. */
  configSchema: ConfigSchema;
  /** Top-level config fields holding credentials (stripped from exports, never audited). */
  sealedFields: readonly string[];
  /** True when monitors of this kind have a ping URL. */
  hasPingUrl: boolean;
  /** Checks a schema-valid config further (what a schema cannot say); a problem names its field under `config.`. */
  checkConfig?(config: any): { field: string; reason: string } | null;
  /**
   * Runs one check. Never throws for a failure of the target: that is a `down`
   * result. Null means there is nothing to conclude yet (a heartbeat that has
   * never pinged and is not late): no result is stored.
   */
  check(config: any, ctx: CheckContext): Promise<CheckResult | null>;
}

const assertion = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'operator', 'value'],
  properties: {
    type: { type: 'string' },
    operator: { enum: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'contains', 'not_contains', 'matches'] },
    value: { type: 'string' },
    property: { type: 'string', minLength: 1, description: 'the header name (header) or JSONPath expression (json_path)' },
  },
} as const;

/** The assertion shape, restricted to a kind's assertion types. */
export function assertionsSchema(types: readonly string[]) {
  return { type: 'array', maxItems: 50, default: [], items: { ...assertion, properties: { ...assertion.properties, type: { enum: types } } } };
}

/** SNMP thresholds: `{reading, operator, value}`, `reading` naming an `oids[].name`. */
export const readingAssertionsSchema = {
  type: 'array', maxItems: 50, default: [],
  items: {
    type: 'object', additionalProperties: false, required: ['reading', 'operator', 'value'],
    properties: { reading: { type: 'string', minLength: 1 }, operator: assertion.properties.operator, value: { type: 'string' } },
  },
} as const;

export const hostname = { type: 'string', minLength: 1, maxLength: 253, pattern: '^[^\\s/]+$' } as const;
export const port = { type: 'integer', minimum: 1, maximum: 65535 } as const;
