import { escapeHtml } from '../../pipeline/html';
import { formats, translator, type Translate } from '../i18n';
import type { ComponentView, DayCell, IncidentView, MaintenanceView, PageModel } from '../model';
import { shell, type Rendered } from './shell';

/** Where the page is being served: the path prefix of its links, and its canonical absolute URL. */
export interface Place { prefix: string; url: string }

type Fmt = ReturnType<typeof formats>;

const time = (d: Date, fmt: Fmt) => `<time datetime="${d.toISOString()}">${escapeHtml(fmt.dateTime(d))}</time>`;

/** Plain text as paragraphs (line breaks kept, nothing interpreted). */
function paragraphs(text: string): string {
  return text.split(/\n{2,}/).map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`).join('');
}

function dayClass(u: number | null): string {
  if (u === null) return '';
  if (u >= 0.999) return 'u0';
  if (u >= 0.99) return 'u1';
  if (u >= 0.95) return 'u2';
  if (u >= 0.5) return 'u3';
  return 'u4';
}

/** The uptime bar: one cell per day, each with its figures as a tooltip (SVG titles need no script). */
function bars(days: DayCell[], t: Translate, fmt: Fmt): string {
  const cells = days.map((d, i) => {
    const label = d.uptime === null
      ? `${fmt.date(new Date(`${d.date}T00:00:00Z`))}: ${t('uptime.noData')}`
      : `${fmt.date(new Date(`${d.date}T00:00:00Z`))}: ${t('uptime.value', { pct: fmt.pct(d.uptime) })}${d.downtimeSeconds > 0 ? `, ${t('uptime.down', { duration: fmt.duration(d.downtimeSeconds) })}` : ''}`;
    const cls = dayClass(d.uptime);
    return `<rect x="${i * 5}" width="4" height="30" rx="1"${cls ? ` class="${cls}"` : ''}><title>${escapeHtml(label)}</title></rect>`;
  });
  return `<svg class="bars" viewBox="0 0 ${days.length * 5 - 1} 30" preserveAspectRatio="none" role="img" aria-label="${escapeHtml(t('uptime.window', { days: days.length }))}">${cells.join('')}</svg>`;
}

/** The response-time line of the last 24 hours, scaled to its own maximum. */
function responseChart(points: (number | null)[], t: Translate, fmt: Fmt): string {
  const known = points.filter((p): p is number => p !== null);
  if (known.length === 0) return '';
  const max = Math.max(...known, 1);
  const avg = known.reduce((a, b) => a + b, 0) / known.length;
  const coords = points.map((p, i) => (p === null ? null : `${i * 10},${(40 - (p / max) * 36).toFixed(1)}`)).filter(Boolean).join(' ');
  return `<div class="legend"><span>${escapeHtml(t('response.title'))}</span><span>${escapeHtml(t('response.average', { ms: fmt.ms(avg) }))}</span></div>`
    + `<svg class="rt" viewBox="0 0 230 40" preserveAspectRatio="none" role="img" aria-label="${escapeHtml(t('response.title'))}"><polyline points="${coords}"/></svg>`;
}

function component(c: ComponentView, m: PageModel, t: Translate, fmt: Fmt): string {
  const days = m.page.historyDays;
  return `<div class="component" id="component-${escapeHtml(c.id)}">
<div class="row"><span class="name">${escapeHtml(c.name)}</span><span class="state ${c.status}">${escapeHtml(t(`status.${c.status}`))}</span></div>
${bars(c.days, t, fmt)}<div class="legend"><span>${escapeHtml(days === 1 ? t('uptime.today') : t('uptime.daysAgo', { days }))}</span><span>${c.uptime === null ? '' : escapeHtml(t('uptime.value', { pct: fmt.pct(c.uptime) }))}</span><span>${escapeHtml(t('uptime.today'))}</span></div>
${m.page.showResponseTimes ? responseChart(c.responseTimes, t, fmt) : ''}</div>`;
}

function components(m: PageModel, t: Translate, fmt: Fmt): string {
  if (!m.page.groupByHost) return m.components.map((c) => component(c, m, t, fmt)).join('\n');
  const groups = new Map<string, ComponentView[]>();
  for (const c of m.components) groups.set(c.group ?? '', [...(groups.get(c.group ?? '') ?? []), c]);
  // Named groups in name order; components without a host last, without a heading.
  return [...groups.entries()].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b)))
    .map(([name, list]) => `<div class="group">${name ? `<h3>${escapeHtml(name)}</h3>` : ''}${list.map((c) => component(c, m, t, fmt)).join('\n')}</div>`).join('\n');
}

/** The names of the components an outage touched, as a list in words. */
function names(ids: string[], m: PageModel): string {
  return ids.map((id) => m.components.find((c) => c.id === id)?.name).filter((n): n is string => !!n).join(', ');
}

/** An outage's title, in the page's words. */
export function incidentTitle(i: IncidentView, m: PageModel, t: Translate): string {
  return t('incident.title', { component: names(i.componentIds, m) || m.page.name });
}

/** The text of an update: what was published, or the page's words for an automatic step. */
export function updateText(u: IncidentView['updates'][number], i: IncidentView, m: PageModel, t: Translate): string {
  if (u.text) return u.text;
  if (u.kind === 'investigating') return t('text.investigating', { components: names(i.componentIds, m) || m.page.name });
  if (u.kind === 'identified') return t('text.identified');
  return t('text.resolved');
}

function incident(i: IncidentView, m: PageModel, t: Translate, fmt: Fmt): string {
  const updates = [...i.updates].reverse().map((u) => `<div class="update"><span class="kind">${escapeHtml(t(`update.${u.kind}`))}</span>${time(u.at, fmt)}<div>${paragraphs(updateText(u, i, m, t))}</div></div>`).join('');
  const affects = i.componentIds.length ? `<div class="muted">${escapeHtml(t('incidents.affects', { components: names(i.componentIds, m) }))}</div>` : '';
  const span = i.resolvedAt ? ` · ${escapeHtml(t('incidents.resolvedAfter', { duration: fmt.duration((i.resolvedAt.getTime() - i.startedAt.getTime()) / 1000) }))}` : '';
  return `<article class="incident" id="incident-${escapeHtml(i.id)}"><div class="title">${escapeHtml(incidentTitle(i, m, t))}</div><div>${time(i.startedAt, fmt)}${span}</div>${affects}${updates}</article>`;
}

function maintenance(w: MaintenanceView, m: PageModel, t: Translate, fmt: Fmt): string {
  const when = `<time datetime="${w.startsAt.toISOString()}">${escapeHtml(t('maintenance.when', { start: fmt.dateTime(w.startsAt), end: fmt.dateTime(w.endsAt) }))}</time>`;
  const affects = w.componentIds.length ? `<div class="muted">${escapeHtml(t('incidents.affects', { components: names(w.componentIds, m) }))}</div>` : '';
  return `<article class="incident maintenance" id="maintenance-${escapeHtml(w.id)}"><div class="row"><span class="title">${escapeHtml(w.title)}</span><span class="state under_maintenance">${escapeHtml(t(w.active ? 'maintenance.inProgress' : 'maintenance.scheduled'))}</span></div><div>${when}</div>${affects}${w.description ? paragraphs(w.description) : ''}</article>`;
}

/** The subscription form (e-mail, or a webhook URL), and what the last submission said. */
export function subscribeForm(place: Place, t: Translate, notice?: { text: string; error: boolean }): string {
  return `<section class="subscribe" id="subscribe"><h2>${escapeHtml(t('subscribe.title'))}</h2>
${notice ? `<p class="notice${notice.error ? ' error' : ''}" role="status">${escapeHtml(notice.text)}</p>` : ''}<form method="post" action="${escapeHtml(`${place.prefix}/subscribe`)}">
<label for="subscribe-email">${escapeHtml(t('subscribe.email'))}</label><input id="subscribe-email" name="email" type="email" autocomplete="email" placeholder="you@example.com">
<label for="subscribe-webhook">${escapeHtml(t('subscribe.webhook'))}</label><input id="subscribe-webhook" name="webhook" type="url" placeholder="https://">
<button type="submit">${escapeHtml(t('subscribe.button'))}</button></form></section>`;
}

/** The header every page of a status page shares: logo, name, headline. */
export function pageHeader(m: PageModel, place: Place): string {
  const logo = m.page.logoUrl ? `<img src="${escapeHtml(m.page.logoUrl)}" alt="">` : '';
  return `<header>${logo}<div><h1><a href="${escapeHtml(place.prefix || '/')}">${escapeHtml(m.page.name)}</a></h1>${m.page.headline ? `<p class="headline">${escapeHtml(m.page.headline)}</p>` : ''}</div></header>`;
}

/** The shell options of every document of a page. */
export function shellOptions(m: PageModel, title: string, extra: { noindex?: boolean; feeds?: { rss: string; atom: string } | null } = {}) {
  let logoOrigin: string | null = null;
  try { logoOrigin = m.page.logoUrl ? new URL(m.page.logoUrl).origin : null; } catch { /* validated on write */ }
  return { language: m.page.language, title, accent: m.page.themeAccent, customCss: m.page.customCss, logoOrigin, noindex: m.page.visibility !== 'public' || extra.noindex, feeds: extra.feeds, state: m.overall };
}

/** The status page itself. */
export function renderPage(m: PageModel, place: Place, notice?: { text: string; error: boolean }): Rendered {
  const t = translator(m.page.language);
  const fmt = formats(m.page.language);
  const active = m.incidents.filter((i) => !i.resolved);
  const past = m.incidents.filter((i) => i.resolved);
  const body = [
    pageHeader(m, place),
    `<div class="banner ${m.overall}" role="status">${escapeHtml(t(`overall.${m.overall}`))}</div>`,
    m.page.description ? `<section class="description">${paragraphs(m.page.description)}</section>` : '',
    active.length ? `<section class="incidents active"><h2>${escapeHtml(t('incidents.active'))}</h2>${active.map((i) => incident(i, m, t, fmt)).join('')}</section>` : '',
    m.maintenance.length ? `<section class="maintenance"><h2>${escapeHtml(t('maintenance.title'))}</h2>${m.maintenance.map((w) => maintenance(w, m, t, fmt)).join('')}</section>` : '',
    `<section class="components">${components(m, t, fmt)}</section>`,
    m.page.showIncidentHistory
      ? `<section class="incidents past"><h2>${escapeHtml(t('incidents.past'))}</h2>${past.length ? past.map((i) => incident(i, m, t, fmt)).join('') : `<p class="muted">${escapeHtml(t('incidents.none', { days: m.page.historyDays }))}</p>`}</section>`
      : '',
    m.page.subscribersEnabled ? subscribeForm(place, t, notice) : '',
    `<footer><span>${escapeHtml(t('page.lastUpdated', { time: fmt.dateTime(m.generatedAt) }))}</span><nav><a href="${escapeHtml(`${place.prefix}/feed.xml`)}">RSS</a><a href="${escapeHtml(`${place.prefix}/atom.xml`)}">Atom</a><a href="${escapeHtml(`${place.prefix}/api/v2/summary.json`)}">JSON</a></nav>${m.page.hideServiceBranding ? '' : `<span>${escapeHtml(t('page.poweredBy'))}</span>`}</footer>`,
  ].filter(Boolean).join('\n');
  return shell(body, shellOptions(m, `${m.page.name} — ${t(`overall.${m.overall}`)}`, { feeds: { rss: `${place.prefix}/feed.xml`, atom: `${place.prefix}/atom.xml` } }));
}

/** A small page of the status page: the password form, a subscription step, an unsubscribe question. */
export function renderMessage(m: PageModel, place: Place, title: string, content: string): Rendered {
  const t = translator(m.page.language);
  const body = `${pageHeader(m, place)}<section><h2>${escapeHtml(title)}</h2>${content}</section><footer><a href="${escapeHtml(place.prefix || '/')}">${escapeHtml(t('link.back'))}</a></footer>`;
  return shell(body, shellOptions(m, `${m.page.name} — ${title}`, { noindex: true }));
}

/** The password form of a protected page, with what went wrong last time. */
export function renderPasswordForm(m: PageModel, place: Place, problem: 'wrong' | 'tooMany' | null): Rendered {
  const t = translator(m.page.language);
  const error = problem ? `<p class="notice error" role="alert">${escapeHtml(t(problem === 'wrong' ? 'password.wrong' : 'password.tooMany'))}</p>` : '';
  const form = `${error}<form method="post" action="${escapeHtml(place.prefix || '/')}"><label for="password">${escapeHtml(t('password.label'))}</label><input id="password" name="password" type="password" autocomplete="current-password" required><button type="submit">${escapeHtml(t('password.button'))}</button></form>`;
  const body = `<header><div><h1>${escapeHtml(m.page.name)}</h1></div></header><section><h2>${escapeHtml(t('password.title'))}</h2>${form}</section>`;
  // Nothing of the page's state before the password: not even the tab icon's colour.
  return shell(body, { ...shellOptions(m, m.page.name, { noindex: true }), state: undefined });
}
