/**
 * What a status page shows, read from the database in a few set-wise queries
 * and nothing more: component names and statuses, daily uptime from the daily
 * roll-ups, hourly response times, maintenance shown on the page, and
 * incidents with their published updates. Never a postmortem, a monitor's
 * config, URL or target, a host's address, or where a check ran: the queries
 * below do not select them, so no renderer can show them.
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/connect';
import { activeOccurrence, nextOccurrence } from '../alerting/maintenance';

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Most incidents a page lists (active ones always come first). */
const MAX_INCIDENTS = 50;

/** A component's state as status pages name it (Atlassian Statuspage's vocabulary). */
export type ComponentStatus = 'operational' | 'degraded' | 'partial_outage' | 'major_outage' | 'under_maintenance' | 'pending' | 'paused';
/** The page's overall state. */
export type Overall = 'operational' | 'degraded' | 'partial_outage' | 'major_outage' | 'maintenance';

export interface DayCell { date: string; uptime: number | null; downtimeSeconds: number }
export interface ComponentView {
  id: string; name: string; status: ComponentStatus; group: string | null;
  /** When the monitor was placed on the page. */
  createdAt: Date;
  /**
   * When what the page shows of the component last changed: its status began
   * (the monitor's status, or the maintenance in force), or the component
   * was placed, whichever is later. Never before `createdAt`.
   */
  updatedAt: Date;
  days: DayCell[]; uptime: number | null;
  /** Hourly average response time over the last 24 hours (null hours without data); empty unless the page shows them. */
  responseTimes: (number | null)[];
}
export interface UpdateView { id: string; at: Date; kind: 'investigating' | 'identified' | 'update' | 'resolved'; text: string | null }
export interface IncidentView {
  id: string; componentIds: string[]; resolved: boolean; startedAt: Date; resolvedAt: Date | null; updatedAt: Date;
  impact: 'minor' | 'major' | 'critical'; updates: UpdateView[];
}
export interface MaintenanceView { id: string; title: string; description: string | null; startsAt: Date; endsAt: Date; active: boolean; componentIds: string[]; createdAt: Date }

/** The page's settings as the public renderers need them (no password hash, no token). */
export interface PageSettings {
  id: string; organizationId: string; name: string; slug: string; visibility: string; headline: string | null; description: string | null;
  logoUrl: string | null; customCss: string | null; themeAccent: string; language: string; historyDays: number;
  showResponseTimes: boolean; showIncidentHistory: boolean; subscribersEnabled: boolean; hideServiceBranding: boolean; groupByHost: boolean;
  customDomain: string | null; createdAt: Date; updatedAt: Date;
}

export interface PageModel {
  page: PageSettings;
  /** A fingerprint of the password hash, so that a new password ends old sessions; null without one. */
  passwordFingerprint: string | null;
  overall: Overall;
  components: ComponentView[];
  incidents: IncidentView[];
  maintenance: MaintenanceView[];
  generatedAt: Date;
}

const STATUS_OF: Record<string, ComponentStatus> = { up: 'operational', degraded: 'degraded', down: 'major_outage', pending: 'pending', paused: 'paused' };

/** The page's overall state from its components' (maintenance counts only when nothing is broken). */
export function overallOf(statuses: ComponentStatus[]): Overall {
  const down = statuses.filter((s) => s === 'major_outage' || s === 'partial_outage').length;
  if (down > 0) return down === statuses.length ? 'major_outage' : 'partial_outage';
  if (statuses.includes('degraded')) return 'degraded';
  if (statuses.includes('under_maintenance')) return 'maintenance';
  return 'operational';
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Loads the model of the page with `slug`; null when there is none. */
export async function loadPageModel(db: Db, slug: string, now = new Date()): Promise<PageModel | null> {
  const p = await db.selectFrom('status_pages').selectAll().where('slug', '=', slug).executeTakeFirst();
  if (!p) return null;
  const rows = await db.selectFrom('status_page_components as c').innerJoin('monitors as m', 'm.id', 'c.monitor_id')
    .select(['c.id', 'c.display_name', 'c.created_at', 'm.id as monitor_id', 'm.name', 'm.status', 'm.status_since'])
    .where('c.page_id', '=', p.id).orderBy('c.position').orderBy('c.id').execute();
  const monitorIds = rows.map((r) => r.monitor_id);
  const componentOf = new Map(rows.map((r) => [r.monitor_id, r.id]));

  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const firstDay = today - (p.history_days - 1) * DAY;
  const [daily, hourly, hosts, windows, incidents] = monitorIds.length === 0 ? [[], [], [], [], []] : await Promise.all([
    db.selectFrom('rollup_daily').select(['monitor_id', 'day', 'checks', 'failures', 'downtime_seconds'])
      .where('monitor_id', 'in', monitorIds).where('day', '>=', utcDay(firstDay)).execute(),
    p.show_response_times
      ? db.selectFrom('rollup_hourly').select(['monitor_id', 'hour', 'response_sum_ms', 'response_count'])
        .where('monitor_id', 'in', monitorIds).where('hour', '>', new Date(Math.floor(now.getTime() / HOUR) * HOUR - 24 * HOUR)).execute()
      : Promise.resolve([]),
    p.group_by_host
      ? db.selectFrom('monitor_hosts as mh').innerJoin('hosts as h', 'h.id', 'mh.host_id').select(['mh.monitor_id', 'h.name'])
        .where('mh.monitor_id', 'in', monitorIds).orderBy('h.name').execute()
      : Promise.resolve([]),
    db.selectFrom('maintenance_windows').select(['id', 'title', 'description', 'starts_at', 'ends_at', 'timezone', 'recurrence_rule', 'monitor_ids', 'created_at'])
      .where('organization_id', '=', p.organization_id).where('show_on_status_page', '=', true)
      .where(sql<SqlBool>`monitor_ids && ${sql.val(monitorIds)}::text[]` as Expression<SqlBool>)
      .where((eb) => eb.or([eb('ends_at', '>', now), eb('recurrence_rule', 'is not', null)])).execute(),
    db.selectFrom('incidents').select(['id', 'monitor_id', 'status', 'root_incident_id', 'started_at', 'resolved_at'])
      .where('organization_id', '=', p.organization_id).where('monitor_id', 'in', monitorIds)
      .where((eb) => eb.or([eb('status', '!=', 'resolved'), ...(p.show_incident_history ? [eb('started_at', '>=', new Date(firstDay))] : [])]))
      .orderBy('started_at', 'desc').limit(MAX_INCIDENTS * 4).execute(),
  ]);

  // Maintenance in force or still ahead, and which components it covers.
  const maintenance: MaintenanceView[] = [];
  /** Components under maintenance now, and since when (the earliest start of the occurrences in force). */
  const inMaintenance = new Map<string, Date>();
  for (const w of windows) {
    const timing = { startsAt: w.starts_at, endsAt: w.ends_at, timezone: w.timezone, recurrenceRule: w.recurrence_rule };
    const next = nextOccurrence(timing, now);
    if (!next) continue;
    const componentIds = w.monitor_ids.map((m) => componentOf.get(m)).filter((c): c is string => !!c);
    const occurrence = activeOccurrence(timing, now);
    const active = occurrence !== null;
    if (occurrence) {
      for (const c of componentIds) {
        const since = inMaintenance.get(c);
        if (!since || occurrence.startsAt < since) inMaintenance.set(c, occurrence.startsAt);
      }
    }
    maintenance.push({ id: w.id, title: w.title, description: w.description, startsAt: next.startsAt, endsAt: next.endsAt, active, componentIds, createdAt: w.created_at });
  }
  maintenance.sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime());

  const byDay = new Map<string, (typeof daily)[number]>();
  for (const d of daily) byDay.set(`${d.monitor_id}/${d.day}`, d);
  const hostOf = new Map<string, string>();
  for (const h of hosts) if (!hostOf.has(h.monitor_id)) hostOf.set(h.monitor_id, h.name);
  const hourStart = Math.floor(now.getTime() / HOUR) * HOUR - 23 * HOUR;
  const byHour = new Map<string, (typeof hourly)[number]>();
  for (const h of hourly) byHour.set(`${h.monitor_id}/${h.hour.getTime()}`, h);

  const components: ComponentView[] = rows.map((r) => {
    const days: DayCell[] = [];
    let checks = 0;
    let failures = 0;
    for (let t = firstDay; t <= today; t += DAY) {
      const d = byDay.get(`${r.monitor_id}/${utcDay(t)}`);
      checks += d?.checks ?? 0;
      failures += d?.failures ?? 0;
      days.push({ date: utcDay(t), uptime: d && d.checks > 0 ? (d.checks - d.failures) / d.checks : null, downtimeSeconds: d?.downtime_seconds ?? 0 });
    }
    const responseTimes = p.show_response_times
      ? Array.from({ length: 24 }, (_, i) => {
        const h = byHour.get(`${r.monitor_id}/${hourStart + i * HOUR}`);
        return h && h.response_count > 0 ? h.response_sum_ms / h.response_count : null;
      })
      : [];
    const maintained = inMaintenance.has(r.id) && r.status !== 'down';
    const status: ComponentStatus = maintained ? 'under_maintenance' : STATUS_OF[r.status] ?? 'pending';
    // A monitor's status usually began before it was placed on the page: the component was not updated before it existed.
    const statusSince = maintained ? inMaintenance.get(r.id)! : r.status_since;
    const updatedAt = statusSince > r.created_at ? statusSince : r.created_at;
    return {
      id: r.id, name: r.display_name ?? r.name, status, group: p.group_by_host ? hostOf.get(r.monitor_id) ?? null : null,
      createdAt: r.created_at, updatedAt, days, uptime: checks > 0 ? (checks - failures) / checks : null, responseTimes,
    };
  });

  return {
    page: {
      id: p.id, organizationId: p.organization_id, name: p.name, slug: p.slug, visibility: p.visibility, headline: p.headline, description: p.description,
      logoUrl: p.logo_url, customCss: p.custom_css, themeAccent: p.theme_accent, language: p.language, historyDays: p.history_days,
      showResponseTimes: p.show_response_times, showIncidentHistory: p.show_incident_history, subscribersEnabled: p.subscribers_enabled,
      hideServiceBranding: p.hide_service_branding, groupByHost: p.group_by_host,
      customDomain: p.domain_verified_at ? p.custom_domain : null, createdAt: p.created_at, updatedAt: p.updated_at,
    },
    passwordFingerprint: p.password_hash ? p.password_hash.slice(-16) : null,
    overall: overallOf(components.map((c) => c.status)),
    components,
    incidents: await incidentViews(db, incidents, componentOf, p.show_incident_history),
    maintenance,
    generatedAt: now,
  };
}

type IncidentRow = { id: string; monitor_id: string | null; status: string; root_incident_id: string | null; started_at: Date; resolved_at: Date | null };

/**
 * Incidents as outages people see: a suppressed incident (the blast radius of
 * another) is shown under its root, not as an outage of its own; each outage
 * lists every page component it touched. Updates: the detected opening, an
 * acknowledgement, each comment published with `publish: true`, and the
 * resolution — never the check's own message (it may name a host or an
 * address) and never a postmortem.
 */
async function incidentViews(db: Db, rows: IncidentRow[], componentOf: Map<string, string>, history: boolean): Promise<IncidentView[]> {
  const groups = new Map<string, IncidentRow[]>();
  for (const r of rows) {
    const key = r.root_incident_id ?? r.id;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const keys = [...groups.keys()];
  if (keys.length === 0) return [];
  // Roots not on the page (their monitor is elsewhere) still decide whether the outage is over.
  const missingRoots = keys.filter((k) => !rows.some((r) => r.id === k));
  const roots = missingRoots.length ? await db.selectFrom('incidents').select(['id', 'status', 'started_at', 'resolved_at']).where('id', 'in', missingRoots).execute() : [];
  const rootOf = new Map(roots.map((r) => [r.id, r]));
  const ids = rows.map((r) => r.id);
  const events = await db.selectFrom('incident_events').select(['id', 'incident_id', 'kind', 'at', 'message', 'public'])
    .where('incident_id', 'in', [...ids, ...missingRoots])
    .where((eb) => eb.or([eb('kind', 'in', ['opened', 'acknowledged', 'resolved']), eb('public', '=', true)]))
    .orderBy('seq').execute();
  const out: IncidentView[] = [];
  for (const [key, members] of groups) {
    const root = members.find((m) => m.id === key) ?? rootOf.get(key);
    const startedAt = root?.started_at ?? members[members.length - 1].started_at;
    const resolved = root ? root.status === 'resolved' : members.every((m) => m.status === 'resolved');
    const groupIds = new Set([key, ...members.map((m) => m.id)]);
    const updates: UpdateView[] = [];
    for (const e of events) {
      if (!groupIds.has(e.incident_id)) continue;
      if (e.public && e.message) updates.push({ id: e.id, at: e.at, kind: 'update', text: e.message });
      else if (e.kind === 'opened' && e.incident_id === key) updates.push({ id: e.id, at: e.at, kind: 'investigating', text: null });
      else if (e.kind === 'acknowledged' && e.incident_id === key) updates.push({ id: e.id, at: e.at, kind: 'identified', text: null });
      else if (e.kind === 'resolved' && e.incident_id === key) updates.push({ id: e.id, at: e.at, kind: 'resolved', text: null });
    }
    // Over when the root is resolved, or when every outage on this page ended (even if the root's elsewhere did not).
    const over = resolved || members.every((m) => m.status === 'resolved');
    // A resolution can be undone (acknowledging a resolved incident): only the last one stands.
    const lastResolved = updates.map((u) => u.kind).lastIndexOf('resolved');
    const shown = updates.filter((u, i) => u.kind !== 'resolved' || (over && i === lastResolved));
    if (shown.length === 0 || shown[0].kind !== 'investigating') shown.unshift({ id: `${key}-opened`, at: startedAt, kind: 'investigating', text: null });
    const resolvedAt = over ? (root?.resolved_at ?? members.map((m) => m.resolved_at).filter((d): d is Date => !!d).sort((a, b) => b.getTime() - a.getTime())[0] ?? null) : null;
    const componentIds = [...new Set(members.map((m) => (m.monitor_id ? componentOf.get(m.monitor_id) : undefined)).filter((c): c is string => !!c))];
    if (!over || history) {
      out.push({
        id: key, componentIds, resolved: over, startedAt, resolvedAt, updatedAt: shown[shown.length - 1].at,
        impact: componentIds.length > 1 ? 'critical' : 'major', updates: shown,
      });
    }
  }
  out.sort((a, b) => Number(a.resolved) - Number(b.resolved) || b.startedAt.getTime() - a.startedAt.getTime());
  return out.slice(0, MAX_INCIDENTS);
}
