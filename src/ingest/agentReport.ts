/**
 * What an agent's report may say (docs/agents.md, src/agent/wire.ts), checked
 * and turned into buffer rows: malformed input is a 400 naming the field,
 * never a 500; times are put on the server's clock.
 */
import { hashToken } from '../crypto/tokens';
import { invalid } from '../pipeline/errors';
import { textProblem } from '../pipeline/text';
import { MAX_DISKS, MAX_SAMPLES_PER_REPORT, MAX_TEXT, type WireDisk } from '../agent/wire';

/** How a figure is checked: percentages are clamped into 0..100, the others must not be negative. */
type FigureKind = 'percent' | 'amount';

/** Each figure of a sample: its name on the wire and in the API, its column, its kind. */
export const FIGURES = [
  ['cpuPercent', 'cpu_percent', 'percent'],
  ['memoryPercent', 'memory_percent', 'percent'],
  ['memoryUsedBytes', 'memory_used_bytes', 'amount'],
  ['memoryTotalBytes', 'memory_total_bytes', 'amount'],
  ['swapPercent', 'swap_percent', 'percent'],
  ['swapUsedBytes', 'swap_used_bytes', 'amount'],
  ['swapTotalBytes', 'swap_total_bytes', 'amount'],
  ['diskPercent', 'disk_percent', 'percent'],
  ['load1', 'load1', 'amount'],
  ['load5', 'load5', 'amount'],
  ['load15', 'load15', 'amount'],
  ['networkRxBytes', 'network_rx_bytes', 'amount'],
  ['networkTxBytes', 'network_tx_bytes', 'amount'],
  ['networkRxBytesPerSecond', 'network_rx_bps', 'amount'],
  ['networkTxBytesPerSecond', 'network_tx_bps', 'amount'],
] as const satisfies readonly (readonly [string, string, FigureKind])[];

/** A figure's name on the wire and in the API. */
export type FigureName = (typeof FIGURES)[number][0];
/** A figure's column in the buffer and in `agent_samples`. */
export type FigureColumn = (typeof FIGURES)[number][1];

/** A sample as buffered: the agent's identity from its report, the time and the figures. */
export type BufferedSample = {
  agent_id: string; received_at: Date; hostname: string | null; os: string | null; version: string | null;
  interval_seconds: number | null; at: Date; disks: string | null;
} & { [C in FigureColumn]: number | null };

/** A sample more than this far behind the server's clock is dropped (an agent's buffer holds about a day by default). */
export const MAX_SAMPLE_AGE_MS = 7 * 86_400_000;
/** A sample this far ahead of the server's clock (after correction) is dropped. */
const MAX_AHEAD_MS = 60_000;
/** A clock further than this from the server's has its samples' times corrected by the difference. */
const SKEW_TOLERANCE_MS = 60_000;
/** The reporting interval an agent may declare. */
const MAX_INTERVAL_SECONDS = 86_400;

/** The hash a report's token is found by, or null for a string that cannot be an agent token. */
export function agentTokenHash(token: string | undefined): Buffer | null {
  return token && /^ag_[A-Za-z0-9_-]{43}$/.test(token) ? hashToken(token) : null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An optional text field of the report, storable and at most `max`
 * characters: a longer one is refused, never stored or cut (every read of
 * the agent would carry it; the agent program cuts what it reads to fit).
 */
function text(v: unknown, field: string, max: number): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw invalid(field, 'must be a string');
  if (v.length > max && [...v].length > max) throw invalid(field, `must be at most ${max} characters`);
  const problem = textProblem(v);
  if (problem) throw invalid(field, problem);
  return v || null;
}

function figure(v: unknown, field: string, kind: FigureKind): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(field, 'must be a number or null');
  if (kind === 'percent') return Math.min(Math.max(v, 0), 100);
  if (v < 0) throw invalid(field, 'must not be negative');
  return v;
}

function time(v: unknown, field: string): Date {
  const d = typeof v === 'string' ? new Date(v) : null;
  if (!d || Number.isNaN(d.getTime())) throw invalid(field, 'must be an ISO 8601 time');
  return d;
}

function disksOf(v: unknown, field: string): WireDisk[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid(field, 'must be a list');
  if (v.length > MAX_DISKS) throw invalid(field, `at most ${MAX_DISKS} filesystems`);
  return v.map((d, i) => {
    const at = `${field}.${i}`;
    if (!isObj(d)) throw invalid(at, 'must be an object');
    const mount = text(d.mount, `${at}.mount`, MAX_TEXT.mount);
    if (!mount) throw invalid(`${at}.mount`, 'is required');
    return {
      mount, filesystem: text(d.filesystem, `${at}.filesystem`, MAX_TEXT.filesystem) ?? '', type: text(d.type, `${at}.type`, MAX_TEXT.type),
      sizeBytes: figure(d.sizeBytes, `${at}.sizeBytes`, 'amount') ?? 0, usedBytes: figure(d.usedBytes, `${at}.usedBytes`, 'amount') ?? 0,
      percent: figure(d.percent, `${at}.percent`, 'percent') ?? 0,
    };
  });
}

/**
 * The samples of a report body, ready to buffer, and how many were dropped
 * for their time. Malformed input is a 400 naming the field
 * (`samples.3.cpuPercent`); fields the server does not know are ignored (a
 * newer agent may send more).
 */
export function parseReport(body: unknown, agentId: string, receivedAt: Date): { rows: BufferedSample[]; dropped: number } {
  if (!isObj(body)) throw invalid('body', 'must be a JSON object');
  const samples = body.samples;
  if (!Array.isArray(samples) || samples.length === 0) throw invalid('samples', 'must be a list of at least one sample');
  if (samples.length > MAX_SAMPLES_PER_REPORT) throw invalid('samples', `at most ${MAX_SAMPLES_PER_REPORT} samples a report`);
  const hostname = text(body.hostname, 'hostname', MAX_TEXT.hostname);
  const os = text(body.os, 'os', MAX_TEXT.os);
  const version = text(body.version, 'version', MAX_TEXT.version);
  let interval: number | null = null;
  if (body.intervalSeconds !== undefined && body.intervalSeconds !== null) {
    if (typeof body.intervalSeconds !== 'number' || !Number.isFinite(body.intervalSeconds) || body.intervalSeconds <= 0) {
      throw invalid('intervalSeconds', 'must be a positive number of seconds');
    }
    interval = Math.min(Math.max(Math.round(body.intervalSeconds), 1), MAX_INTERVAL_SECONDS);
  }
  // A clock well off the server's (no NTP, a laptop waking up) has its times shifted onto the server's.
  let skew = 0;
  if (body.sentAt !== undefined && body.sentAt !== null) {
    const off = receivedAt.getTime() - time(body.sentAt, 'sentAt').getTime();
    if (Math.abs(off) > SKEW_TOLERANCE_MS) skew = Math.round(off / 1000) * 1000;
  }
  const rows: BufferedSample[] = [];
  let dropped = 0;
  samples.forEach((s, i) => {
    const at = `samples.${i}`;
    if (!isObj(s)) throw invalid(at, 'must be an object');
    const when = new Date(time(s.at, `${at}.at`).getTime() + skew);
    const figures = Object.fromEntries(FIGURES.map(([name, column, kind]) => [column, figure(s[name], `${at}.${name}`, kind)])) as { [C in FigureColumn]: number | null };
    const disks = disksOf(s.disks, `${at}.disks`);
    // The fullest filesystem, when the agent listed them and did not say.
    if (figures.disk_percent === null && disks.length > 0) figures.disk_percent = Math.max(...disks.map((d) => d.percent));
    const age = receivedAt.getTime() - when.getTime();
    if (age > MAX_SAMPLE_AGE_MS || age < -MAX_AHEAD_MS) { dropped++; return; }
    rows.push({
      agent_id: agentId, received_at: receivedAt, hostname, os, version, interval_seconds: interval, at: when,
      disks: disks.length ? JSON.stringify(disks) : null, ...figures,
    });
  });
  return { rows, dropped };
}
