/**
 * Helpers of the alert-latency benchmark (bench/alerts.ts): IPC, CPU
 * accounting, the webhook channels (inserted directly, sealed with the shared
 * master key), moving the monitors' schedule, waiting on their state, and the
 * per-incident breakdown read back from the database. Figures and tables are
 * in bench/alerts-report.ts.
 */
import os from 'node:os';
import pg from 'pg';
import type { Child } from './lib';
import { machineBusy, postgresCpu, processCpu } from './checks-lib';
import { createSecretBox } from '../src/crypto/secrets';
import { newId } from '../src/crypto/ids';
import { newToken } from '../src/crypto/tokens';

/** Sends `msg` to a child and waits for its answer of the same type. */
export function ask<T>(c: Child<unknown>, msg: { type: string } & Record<string, unknown>): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type?: string }) => { if (m?.type === msg.type) { c.proc.off('message', on); resolve(m as T); } };
    c.proc.on('message', on);
    c.proc.send(msg);
  });
}

/** CPU seconds so far (from /proc) of the Vigil child, this database's PostgreSQL, the rig (other children + this process) and the machine. */
export function cpuNow(vigilPid: number, rigPids: number[], dbName: string) {
  const me = process.cpuUsage();
  return { vigil: processCpu(vigilPid), pg: postgresCpu(dbName).own, busy: machineBusy(), t: Date.now(),
    rig: rigPids.reduce((sum, pid) => sum + processCpu(pid), (me.user + me.system) / 1e6) };
}

/** Where the CPU went between two `cpuNow` snapshots. */
export function cpuLine(a: ReturnType<typeof cpuNow>, b: ReturnType<typeof cpuNow>): string {
  const [secs, vigil, pgs, rig, busy] = [(b.t - a.t) / 1000, b.vigil - a.vigil, b.pg - a.pg, b.rig - a.rig, b.busy - a.busy];
  return `CPU over ${secs.toFixed(0)} s: Vigil ${vigil.toFixed(1)} s, PostgreSQL ${pgs.toFixed(1)} s, target + receiver + this process ${rig.toFixed(1)} s, ` +
    `other processes ${(busy - vigil - pgs - rig).toFixed(1)} s; machine busy ${Math.round((100 * busy) / (secs * os.cpus().length))}% of ${os.cpus().length} cores`;
}

/**
 * Inserts `count` org-wide webhook channels to `hook` (enabled, confirmed,
 * target and signing secret sealed as createChannel seals them) and links
 * monitor i to channel i % count. Returns the monitor ids in schedule order.
 */
export async function seedChannels(c: pg.Client, masterKey: Buffer, organizationId: string, hook: string, count: number): Promise<string[]> {
  const box = createSecretBox(masterKey);
  const ids = (await c.query(`select m.id from monitors m join monitor_schedule s on s.monitor_id = m.id where m.organization_id = $1 order by s.next_due_at, m.id`, [organizationId])).rows.map((r) => r.id as string);
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
    await c.query(`update monitor_schedule set next_due_at = now() + interval '1 day' where monitor_id in (select id from monitors where organization_id = $1) and next_due_at < now() + interval '1 hour'`, [organizationId]);
    await new Promise((r) => setTimeout(r, 500));
    const { rows } = await c.query(`select count(*)::int as n from monitor_schedule where monitor_id in (select id from monitors where organization_id = $1)
      and (lease_until is not null or next_due_at < now() + interval '1 hour')`, [organizationId]);
    if (rows[0].n === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0].n} monitors still in flight after 60 s`);
  }
}

/** Makes monitor k (in schedule order) due at `start + k × spreadMs / n`: spread 0 = all due at once. */
export async function scheduleFrom(c: pg.Client, ids: string[], start: number, spreadMs: number): Promise<void> {
  await c.query(`update monitor_schedule s set next_due_at = $2::timestamptz + make_interval(secs => (u.n - 1) * $3::float8 / 1000)
    from unnest($1::text[]) with ordinality as u(id, n) where s.monitor_id = u.id`, [ids, new Date(start), spreadMs / ids.length]);
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
