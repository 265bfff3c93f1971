import { sql } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { findMonitor, listMonitors } from './monitors';

const HOUR = 3_600_000;
const pct = (ok: number, all: number) => (all === 0 ? null : Math.round((100 * ok / all) * 1000) / 1000);

/**
 * Daily availability from the daily roll-ups: one entry per day of the window
 * ending today (UTC), `days` clamped to the plan's retention; a day without
 * checks has uptime null.
 */
export async function monitorHistory(db: Db, caller: Caller, id: string, daysAsked = 30, now = new Date()) {
  await findMonitor(db, caller, id);
  const days = Math.min(Math.max(daysAsked, 1), caller.plan.history_retention_days);
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const first = new Date(today.getTime() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const rows = await db.selectFrom('rollup_daily').selectAll().where('monitor_id', '=', id).where('day', '>=', first).execute();
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out = [];
  for (let i = 0; i < days; i++) {
    const date = new Date(today.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10);
    const r = byDay.get(date);
    out.push({ date, uptime: r ? pct(r.checks - r.failures, r.checks) : null, checks: r?.checks ?? 0, failures: r?.failures ?? 0, downtimeSeconds: r?.downtime_seconds ?? 0 });
  }
  return { monitorId: id, days: out };
}

type Hourly = { monitor_id: string; hour: Date; checks: number; failures: number; response_sum_ms: number; response_count: number;
  readings: Record<string, { sum: number; count: number; unit: string | null }> | null };

function graphOf(monitorId: string, kind: string, hours: number, start: Date, rows: Hourly[], now: Date) {
  const byHour = new Map(rows.map((r) => [r.hour.getTime(), r]));
  const uptime = [];
  const names = new Map<string, string | null>();
  for (const r of rows) for (const [name, v] of Object.entries(r.readings ?? {})) names.set(name, v.unit ?? names.get(name) ?? null);
  const series = [...names.entries()].map(([name, unit]) => ({ name, unit, raw: unit === null, points: [] as { at: string; value: number | null }[] }));
  for (let i = 0; i < hours; i++) {
    const at = new Date(start.getTime() + i * HOUR);
    const r = byHour.get(at.getTime());
    uptime.push({
      at: at.toISOString(),
      ratio: r && r.checks > 0 ? (r.checks - r.failures) / r.checks : null,
      checks: r?.checks ?? 0,
      avgResponseTimeMs: r && r.response_count > 0 ? Math.round((r.response_sum_ms / r.response_count) * 10) / 10 : null,
    });
    for (const s of series) {
      const v = r?.readings?.[s.name];
      s.points.push({ at: at.toISOString(), value: v && v.count > 0 ? v.sum / v.count : null });
    }
  }
  return {
    monitorId, type: (kind === 'snmp' ? 'value' : 'uptime') as 'uptime' | 'value', hours,
    from: start.toISOString(), to: new Date(Math.min(start.getTime() + hours * HOUR, now.getTime() + HOUR)).toISOString(), uptime, series,
  };
}

function window(hoursAsked: number | undefined, now: Date) {
  const hours = Math.min(Math.max(hoursAsked ?? 24, 1), 168);
  const current = Math.floor(now.getTime() / HOUR) * HOUR;
  return { hours, start: new Date(current - (hours - 1) * HOUR) };
}

async function hourly(db: Db, ids: string[], start: Date): Promise<Hourly[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<Hourly>`select monitor_id, hour, checks, failures, response_sum_ms, response_count, readings
    from rollup_hourly where monitor_id = any(${ids}) and hour >= ${start}`.execute(db);
  return rows;
}

/**
 * The hourly graph of one monitor from the hourly roll-ups: every hour of the
 * window present (oldest first, the current hour last), pass ratio null for
 * hours without checks; readings as value series with their unit (`raw` when
 * the unit is unknown).
 */
export async function monitorGraph(db: Db, caller: Caller, id: string, hoursAsked?: number, now = new Date()) {
  const m = await findMonitor(db, caller, id);
  const { hours, start } = window(hoursAsked, now);
  return graphOf(id, m.kind, hours, start, await hourly(db, [id], start), now);
}

/** Graphs of every monitor the caller can see. */
export async function monitorGraphs(db: Db, caller: Caller, hoursAsked?: number, now = new Date()) {
  const monitors = await listMonitors(db, caller);
  const { hours, start } = window(hoursAsked, now);
  const rows = await hourly(db, monitors.map((m) => m.id), start);
  const byMonitor = new Map<string, Hourly[]>();
  for (const r of rows) byMonitor.set(r.monitor_id, [...(byMonitor.get(r.monitor_id) ?? []), r]);
  return monitors.map((m) => graphOf(m.id, m.kind, hours, start, byMonitor.get(m.id) ?? [], now));
}
