/**
 * The agent's report, as the agent program posts it and the server reads it
 * (docs/agents.md). The agent program imports nothing else of the server; the
 * server imports these types from here.
 */

/** Where reports go, under the server's base URL (outside `/api/v1`: the agent's token is not an API key). */
export const REPORT_PATH = '/agent/v1/report';

/** Samples one report may carry at most (a backlog is sent in several reports). */
export const MAX_SAMPLES_PER_REPORT = 1000;

/** Filesystems a sample may list at most. */
export const MAX_DISKS = 64;

/**
 * The most characters each text of a report may have: the server refuses one
 * over (400 naming the field), and the agent program cuts what it reads from
 * the machine to fit ({@link clip}), so a long mount path never costs a report.
 */
export const MAX_TEXT = { hostname: 255, os: 255, version: 64, mount: 255, filesystem: 255, type: 64 } as const;

/** `s` cut to at most `max` characters (code points, as the server counts them). */
export function clip(s: string, max: number): string {
  const chars = [...s];
  return chars.length <= max ? s : chars.slice(0, max).join('');
}

/** One mounted filesystem. */
export interface WireDisk {
  mount: string;
  filesystem: string;
  type: string | null;
  sizeBytes: number;
  usedBytes: number;
  /** 0 to 100, as `df` counts it (used over used plus available). */
  percent: number;
}

/** One sample; the figure names are those of `AgentSample` in the API. A figure that could not be read is null. */
export interface WireSample {
  /** ISO 8601, the agent's clock. */
  at: string;
  cpuPercent: number | null;
  memoryPercent: number | null;
  memoryUsedBytes: number | null;
  memoryTotalBytes: number | null;
  swapPercent: number | null;
  swapUsedBytes: number | null;
  swapTotalBytes: number | null;
  diskPercent: number | null;
  disks: WireDisk[];
  load1: number | null;
  load5: number | null;
  load15: number | null;
  networkRxBytes: number | null;
  networkTxBytes: number | null;
  networkRxBytesPerSecond: number | null;
  networkTxBytesPerSecond: number | null;
}

/** The body of `POST {base_url}/agent/v1/report` (with `Authorization: Bearer <agent token>`). */
export interface AgentReport {
  hostname: string;
  /** For people: `Debian GNU/Linux 12 (linux 6.1.0, x64)`. */
  os: string;
  /** The agent program's version. */
  version: string;
  /** Seconds between samples. */
  intervalSeconds: number;
  /** ISO 8601, the agent's clock when it sent the report (the server corrects a clock over a minute off). */
  sentAt: string;
  /** Oldest first. */
  samples: WireSample[];
}

/** The answer to a report: samples accepted, and those refused for a time too far from now (older than 7 days, or ahead). */
export interface ReportAnswer { accepted: number; dropped: number }
