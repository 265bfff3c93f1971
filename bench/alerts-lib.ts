/**
 * Helpers of the alert-latency benchmark (bench/alerts.ts): the webhook
 * channels (inserted directly, sealed with the shared master key), moving the
 * monitors' schedule, waiting on their state, the per-incident breakdown read
 * back from the database, percentiles and the markdown tables.
 */
import pg from 'pg';
import { createSecretBox } from '../src/crypto/secrets';
import { newId } from '../src/crypto/ids';
import { newToken } from '../src/crypto/tokens';

/**
 * Inserts `count` org-wide webhook channels to `hook` (enabled, confirmed,
 * target and signing secret sealed as createChannel seals them) and links
 * monitor i to channel i % count. Returns the monitor ids in schedule order.
 */
export async function seedChannels(c: pg.Client, masterKey: Buffer, organizationId: string, hook: string, count: number): Promise<string[]> {
  const box = createSecretBox(masterKey);
  const ids = (await c.query(`select id from monitors where organization_id = $1 order by next_due_at, id`, [organizationId])).rows.map((r) => r.id as string);
  const channels = Array.from({ length: count }, () => newId('ch'));
  for (const [k, id] of channels.entries()) {
    await c.query(`insert into notification_channels (id, organization_id, kind, name, target, enabled, confirmed_at, target_enc, secret_enc, config)
      values ($1, $2, 'webhook', $3, $4, true, now(), $5, $6, '{}')`, [id, organizationId, `bench hook ${k}`, hook, box.seal(hook), box.seal(newToken('whsec').token)]);
  }
  await c.query(`insert into monitor_channels (monitor_id, channel_id) select m, ($2::text[])[(n - 1) % $3 + 1]
    from unnest($1::text[]) with ordinality as u(m, n)`, [ids, channels, count]);
  return ids;
}

/**
 * Takes every monitor of the organisation off the schedule (due in a day) and
 * waits until no check is in flight. A check in flight writes its own next due
 * time when it finishes, so the parking is repeated until it holds.
 */
export async function park(c: pg.Client, organizationId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await c.query(`update monitors set next_due_at = now() + interval '1 day' where organization_id = $1 and next_due_at < now() + interval '1 hour'`, [organizationId]);
    await new Promise((r) => setTimeout(r, 500));
    const { rows } = await c.query(`select count(*)::int as n from monitors where organization_id = $1
      and (lease_until is not null or next_due_at < now() + interval '1 hour')`, [organizationId]);
    if (rows[0].n === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0].n} monitors still in flight after 60 s`);
  }
}

/** Makes monitor k (in schedule order) due at `start + k × spreadMs / n`: spread 0 = all due at once. */
export async function scheduleFrom(c: pg.Client, ids: string[], start: number, spreadMs: number): Promise<void> {
  await c.query(`update monitors m set next_due_at = $2::timestamptz + make_interval(secs => (u.n - 1) * $3::float8 / 1000)
    from unnest($1::text[]) with ordinality as u(id, n) where m.id = u.id`, [ids, new Date(start), spreadMs / ids.length]);
}

/** Polls `sql` (one int column `n`) every 250 ms until `ok(n)`; throws after `timeoutMs`. */
export async function waitFor(c: pg.Client, sql: string, params: unknown[], ok: (n: number) => boolean, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = (await c.query(sql, params)).rows[0].n as number;
    if (ok(n)) return n;
    if (Date.now() > deadline) throw new Error(`timed out waiting (${n}): ${sql.replace(/\s+/g, ' ').slice(0, 120)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Where one incident's time went, in ms, from the database. */
export interface Stages { incidentId: string; started: number; checkMs: number | null; queuedAt: number | null; postStart: number | null; postMs: number | null }

/**
 * The incidents opened at or after `since`, each with its check's response
 * time, when its delivery row was written (the result writer's transaction
 * start, `now()`), and when the successful POST started (attempt time minus
 * its duration; the attempt row is inserted after the POST returns).
 */
export async function incidentsSince(c: pg.Client, organizationId: string, since: number): Promise<Stages[]> {
  const { rows } = await c.query(`select i.id, extract(epoch from i.started_at) * 1000 as started, r.response_time_ms as check_ms,
      extract(epoch from d.created_at) * 1000 as queued, extract(epoch from a.at) * 1000 - a.duration_ms as post_start, a.duration_ms
    from incidents i
      left join deliveries d on d.incident_id = i.id and d.event = 'incident.opened'
      left join delivery_attempts a on a.delivery_id = d.id and a.ok
      left join check_results r on r.monitor_id = i.monitor_id and r.at = i.started_at
    where i.organization_id = $1 and i.started_at >= $2`, [organizationId, new Date(since)]);
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({ incidentId: r.id, started: Number(r.started), checkMs: num(r.check_ms), queuedAt: num(r.queued), postStart: num(r.post_start), postMs: num(r.duration_ms) }));
}

/** Nearest-rank percentile of a sorted array (NaN when empty). */
export function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

/** count, p50, p90, p99, max of some values. */
export function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  return { count: s.length, p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s.at(-1) ?? NaN };
}

/** The stages of the breakdown table, from the incidents' rows and the measured latencies. */
export function stagesOf(incidents: Stages[], latencies: number[]) {
  const got = (f: (i: Stages) => number | null) => incidents.map(f).filter((v): v is number => v !== null && Number.isFinite(v));
  return [
    { name: 'check response (ms)', s: summary(got((i) => i.checkMs)) },
    { name: 'result transaction begins (ms)', s: summary(got((i) => (i.queuedAt === null ? null : i.queuedAt - i.started))) },
    { name: 'queue pickup: tx begin → POST (ms)', s: summary(got((i) => (i.queuedAt === null || i.postStart === null ? null : i.postStart - i.queuedAt))) },
    { name: 'POST starts (ms)', s: summary(got((i) => (i.postStart === null ? null : i.postStart - i.started))) },
    { name: 'POST duration (ms)', s: summary(got((i) => i.postMs)) },
    { name: 'webhook arrives (ms)', s: summary(latencies) },
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
