/**
 * The machine-readable twins of a status page, in the shapes tools already
 * read: Atlassian Statuspage's `api/v2/summary.json` and `status.json`, and a
 * shields.io-style SVG badge.
 */
import { Feed } from 'feed';
import { escapeHtml, xmlSafe } from '../../pipeline/html';
import { formats, translator } from '../i18n';
import type { ComponentStatus, IncidentView, Overall, PageModel } from '../model';
import { incidentTitle, updateText, type Place } from './page';

/** Atlassian's status indicator of an overall state. */
const INDICATOR: Record<Overall, 'none' | 'minor' | 'major' | 'critical'> = {
  operational: 'none', maintenance: 'none', degraded: 'minor', partial_outage: 'major', major_outage: 'critical',
};
const DESCRIPTION: Record<Overall, string> = {
  operational: 'All Systems Operational', maintenance: 'Service Under Maintenance', degraded: 'Degraded System Service',
  partial_outage: 'Partial System Outage', major_outage: 'Major Service Outage',
};
/** Atlassian's component statuses: no data and paused show as operational (nothing is known to be wrong). */
const COMPONENT: Record<ComponentStatus, string> = {
  operational: 'operational', degraded: 'degraded_performance', partial_outage: 'partial_outage', major_outage: 'major_outage',
  under_maintenance: 'under_maintenance', pending: 'operational', paused: 'operational',
};
const UPDATE: Record<IncidentView['updates'][number]['kind'], string> = { investigating: 'investigating', identified: 'identified', update: 'monitoring', resolved: 'resolved' };

function pageOf(m: PageModel, place: Place) {
  return { id: m.page.id, name: m.page.name, url: place.url, time_zone: 'Etc/UTC', updated_at: m.generatedAt.toISOString() };
}

function statusOf(m: PageModel) {
  return { indicator: INDICATOR[m.overall], description: DESCRIPTION[m.overall] };
}

/** `api/v2/status.json`: the page and its indicator. */
export function statusJson(m: PageModel, place: Place): string {
  return JSON.stringify({ page: pageOf(m, place), status: statusOf(m) });
}

/** `api/v2/summary.json`: components, unresolved incidents, maintenance in force or ahead. */
export function summaryJson(m: PageModel, place: Place): string {
  const t = translator(m.page.language);
  const groups = m.page.groupByHost ? [...new Set(m.components.map((c) => c.group).filter((g): g is string => !!g))] : [];
  const groupId = (name: string) => `${m.page.id}-group-${groups.indexOf(name)}`;
  const componentOut = (id: string) => {
    const c = m.components.find((x) => x.id === id);
    return c ? { id: c.id, name: c.name, status: COMPONENT[c.status] } : null;
  };
  const components = [
    ...groups.map((g, i) => {
      const members = m.components.filter((c) => c.group === g);
      return {
        id: groupId(g), name: g, status: COMPONENT[members.map((c) => c.status).sort((a, b) => rank(b) - rank(a))[0] ?? 'operational'],
        created_at: m.page.createdAt.toISOString(), updated_at: m.generatedAt.toISOString(), position: i, description: null, showcase: false,
        start_date: null, group_id: null, page_id: m.page.id, group: true, only_show_if_degraded: false, components: members.map((c) => c.id),
      };
    }),
    // created_at: when the monitor was placed on the page; updated_at: when its shown status last changed, never before created_at (model.ts).
    ...m.components.map((c, i) => ({
      id: c.id, name: c.name, status: COMPONENT[c.status], created_at: c.createdAt.toISOString(), updated_at: c.updatedAt.toISOString(),
      position: i + 1, description: null, showcase: true, start_date: null, group_id: c.group ? groupId(c.group) : null, page_id: m.page.id,
      group: false, only_show_if_degraded: false,
    })),
  ];
  const incidents = m.incidents.filter((i) => !i.resolved).map((i) => ({
    id: i.id, name: incidentTitle(i, m, t), status: UPDATE[i.updates[i.updates.length - 1].kind], created_at: i.startedAt.toISOString(),
    updated_at: i.updatedAt.toISOString(), monitoring_at: null, resolved_at: null, impact: i.impact, shortlink: `${place.url}#incident-${i.id}`,
    started_at: i.startedAt.toISOString(), page_id: m.page.id,
    incident_updates: [...i.updates].reverse().map((u) => ({
      id: u.id, status: UPDATE[u.kind], body: updateText(u, i, m, t), incident_id: i.id, created_at: u.at.toISOString(), updated_at: u.at.toISOString(),
      display_at: u.at.toISOString(), affected_components: null,
    })),
    components: i.componentIds.map(componentOut).filter(Boolean),
  }));
  const maintenance = m.maintenance.map((w) => ({
    id: w.id, name: w.title, status: w.active ? 'in_progress' : 'scheduled', created_at: w.createdAt.toISOString(), updated_at: w.createdAt.toISOString(),
    monitoring_at: null, resolved_at: null, impact: 'maintenance', shortlink: `${place.url}#maintenance-${w.id}`, started_at: w.startsAt.toISOString(),
    page_id: m.page.id, incident_updates: w.description ? [{ id: `${w.id}-description`, status: w.active ? 'in_progress' : 'scheduled', body: w.description, incident_id: w.id,
      created_at: w.createdAt.toISOString(), updated_at: w.createdAt.toISOString(), display_at: w.createdAt.toISOString(), affected_components: null }] : [],
    components: w.componentIds.map(componentOut).filter(Boolean), scheduled_for: w.startsAt.toISOString(), scheduled_until: w.endsAt.toISOString(),
  }));
  return JSON.stringify({ page: pageOf(m, place), status: statusOf(m), components, incidents, scheduled_maintenances: maintenance });
}

function rank(s: ComponentStatus): number {
  return ['paused', 'pending', 'operational', 'under_maintenance', 'degraded', 'partial_outage', 'major_outage'].indexOf(s);
}

const BADGE_COLOUR: Record<Overall, string> = { operational: '#4c1', maintenance: '#007ec6', degraded: '#dfb317', partial_outage: '#fe7d37', major_outage: '#e05d44' };

/** Width of text in Verdana 11px, near enough for a badge (shields.io's own widths are per-glyph; these are averages). */
function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += /[ilIjt.,:;'!|]/.test(ch) ? 3.5 : /[mwMW]/.test(ch) ? 10 : /[A-Z0-9]/.test(ch) ? 7.5 : 6.5;
  return Math.round(w);
}

/** `badge.svg`: the overall state as a flat shields.io-style badge, in the page's language. */
export function badgeSvg(m: PageModel): string {
  const t = translator(m.page.language);
  const label = t('badge.label');
  const value = t(`badge.${m.overall}`);
  const lw = textWidth(label) + 10;
  const vw = textWidth(value) + 10;
  const w = lw + vw;
  const text = (s: string, x: number) => `<text x="${x}" y="15" fill="#010101" fill-opacity=".3">${escapeHtml(s)}</text><text x="${x}" y="14">${escapeHtml(s)}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${escapeHtml(`${label}: ${value}`)}"><title>${escapeHtml(`${m.page.name} ${label}: ${value}`)}</title>`
    + `<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`
    + `<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>`
    + `<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${vw}" height="20" fill="${BADGE_COLOUR[m.overall]}"/><rect width="${w}" height="20" fill="url(#s)"/></g>`
    + `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">${text(label, lw / 2)}${text(value, lw + vw / 2)}</g></svg>`;
}

/** `feed.xml` (RSS 2.0) or `atom.xml` (Atom): the page's outages and maintenance, newest first. */
export function pageFeed(format: 'rss' | 'atom', m: PageModel, place: Place): string {
  const t = translator(m.page.language);
  const fmt = formats(m.page.language);
  const feed = new Feed({
    id: place.url, link: place.url, title: xmlSafe(t('feed.title', { page: m.page.name })), description: xmlSafe(t('feed.description', { page: m.page.name })),
    language: m.page.language, updated: m.generatedAt, generator: 'Vigil', copyright: '', author: { name: xmlSafe(m.page.name) },
    feedLinks: { rss: `${place.url}/feed.xml`, atom: `${place.url}/atom.xml` },
  });
  const html = (s: string) => escapeHtml(xmlSafe(s));
  const plain = (s: string) => (format === 'atom' ? html(s) : xmlSafe(s).replace(/]]>/g, ']] >'));
  for (const i of m.incidents) {
    const updates = [...i.updates].reverse().map((u) => `<p><b>${html(t(`update.${u.kind}`))}</b> (${html(fmt.dateTime(u.at))}): ${html(updateText(u, i, m, t))}</p>`).join('');
    feed.addItem({
      title: plain(`${incidentTitle(i, m, t)} — ${t(i.resolved ? 'update.resolved' : 'update.investigating')}`),
      id: `${place.url}#incident-${i.id}`, link: `${place.url}#incident-${i.id}`, date: i.updatedAt, published: i.startedAt, description: updates,
    });
  }
  for (const w of m.maintenance) {
    feed.addItem({
      title: plain(`${t('maintenance.title')}: ${w.title}`), id: `${place.url}#maintenance-${w.id}`, link: `${place.url}#maintenance-${w.id}`,
      date: w.createdAt, published: w.createdAt,
      description: `<p>${html(t('maintenance.when', { start: fmt.dateTime(w.startsAt), end: fmt.dateTime(w.endsAt) }))}</p>${w.description ? `<p>${html(w.description)}</p>` : ''}`,
    });
  }
  return format === 'atom' ? feed.atom1() : feed.rss2();
}
