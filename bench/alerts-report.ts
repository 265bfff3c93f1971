/**
 * Figures and tables of the alert-latency benchmark (bench/alerts.ts):
 * percentiles, the per-stage breakdown of where an alert's time went, how the
 * incidents flowed through the result writer and the queue, and the markdown
 * tables for the README.
 */
import type { Stages } from './alerts-lib';

/** Nearest-rank percentile of a sorted array (NaN when empty). */
export function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

/** count, p50, p90, p99, max of some values. */
export function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  return { count: s.length, p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s.at(-1) ?? NaN };
}

/**
 * The stages of the breakdown table, from the incidents' rows and the measured
 * latencies. The commit of a result transaction is not recorded, so it is
 * approximated (from above) by the first POST of the incidents it opened.
 */
export function stagesOf(incidents: Stages[], latencies: number[]) {
  const firstPost = new Map<number, number>();
  for (const i of incidents) {
    if (i.queuedAt !== null && i.postStart !== null) firstPost.set(i.queuedAt, Math.min(firstPost.get(i.queuedAt) ?? Infinity, i.postStart));
  }
  const committed = (i: Stages) => (i.queuedAt === null ? null : firstPost.get(i.queuedAt) ?? null);
  const got = (f: (i: Stages) => number | null) => incidents.map(f).filter((v): v is number => v !== null && Number.isFinite(v));
  return [
    { name: 'check response (ms)', s: summary(got((i) => i.checkMs)) },
    { name: 'result transaction begins', s: summary(got((i) => (i.queuedAt === null ? null : i.queuedAt - i.started))) },
    { name: 'it commits (≈ its first POST)', s: summary(got((i) => (committed(i) === null ? null : committed(i)! - i.started))) },
    { name: 'queue wait: commit → POST (ms)', s: summary(got((i) => (committed(i) === null || i.postStart === null ? null : i.postStart - committed(i)!))) },
    { name: 'POST starts', s: summary(got((i) => (i.postStart === null ? null : i.postStart - i.started))) },
    { name: 'POST duration (ms)', s: summary(got((i) => i.postMs)) },
    { name: 'webhook arrives', s: summary(latencies) },
  ];
}

/** How the incidents flowed: result transactions that opened them (sizes, span) and the deliveries' rate. */
export function flow(incidents: Stages[]): string {
  const batches = new Map<number, number>();
  for (const i of incidents) if (i.queuedAt !== null) batches.set(i.queuedAt, (batches.get(i.queuedAt) ?? 0) + 1);
  const tx = [...batches.keys()].sort((a, b) => a - b);
  const posts = incidents.map((i) => i.postStart).filter((v): v is number => v !== null).sort((a, b) => a - b);
  const span = (xs: number[]) => (xs.length > 1 ? (xs.at(-1)! - xs[0]) / 1000 : 0);
  return `${tx.length} result transactions opened them (largest ${Math.max(0, ...batches.values())} incidents; first to last began ${span(tx).toFixed(2)} s apart); ` +
    `POSTs started over ${span(posts).toFixed(2)} s (${span(posts) ? Math.round(posts.length / span(posts)) : '–'}/s)`;
}

/** One scenario as the tables show it. */
export interface PhaseRow {
  name: string; spreadS: number; expected: number; incidents: number; latency: ReturnType<typeof summary>; missing: number; duplicates: number;
  stages: { name: string; s: ReturnType<typeof summary> }[]; cpu: string;
}

const fmt = (x: number, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '–');

/** True when the scenario meets the target: every expected incident opened, every webhook arrived, p99 under 2 s. */
export const meets = (r: PhaseRow) => r.latency.p99 < 2000 && r.missing === 0 && r.incidents === r.expected;

/** The README table: confirming check → webhook arrival, per scenario. */
export function latencyTable(rows: PhaseRow[]): string {
  const out = ['| Scenario | Incidents | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) | Webhooks never arrived | Target met (p99 < 2 s, none lost) |',
    '|---|---:|---:|---:|---:|---:|---:|:---:|'];
  for (const r of rows) {
    const l = r.latency;
    out.push(`| ${r.name} | ${fmt(r.incidents)} | ${fmt(l.p50)} | ${fmt(l.p90)} | ${fmt(l.p99)} | ${fmt(l.max)} | ${fmt(r.missing)} | ${meets(r) ? 'yes' : 'no'} |`);
  }
  return out.join('\n');
}

/** Where the time goes, per scenario: p50 / p99 of each stage. */
export function stagesTable(rows: PhaseRow[]): string {
  const names = rows[0]?.stages.map((s) => s.name) ?? [];
  const out = [`| Scenario | ${names.join(' | ')} |`, `|---|${names.map(() => '---:').join('|')}|`];
  for (const r of rows) out.push(`| ${r.name} | ${r.stages.map((s) => `${fmt(s.s.p50)} / ${fmt(s.s.p99)}`).join(' | ')} |`);
  return out.join('\n');
}
