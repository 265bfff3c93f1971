import { isErrorIssueEvent, type AlertErrorIssue, type AlertEvent, type AlertIncident, type AlertMessage } from './channel';

/** What `alertText` may add to the line: the check's own words and who acted. */
export interface TextDetail {
  /** The check's one-line message ("status_code 503 is not < 400"); defaults to the incident's cause in words. */
  detail?: string | null;
  /** Who acknowledged (or escalated to whom). */
  actor?: string | null;
  /** The error issue of an `error_issue.*` alert. */
  errorIssue?: AlertErrorIssue | null;
}

const EMOJI: Record<AlertEvent, string> = {
  'incident.opened': '🔴',
  'incident.acknowledged': '👀',
  'incident.resolved': '✅',
  'incident.escalated': '📣',
  'error_issue.created': '🐞',
  'error_issue.regressed': '♻️',
  test: '🧪',
};

/** Cause codes read as words ("connection_failed" → "connection failed"). */
export function causeWords(cause: string): string {
  return cause.replace(/_/g, ' ');
}

/** A duration for people: "45s", "4m 12s", "3h 5m", "2d 4h". */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  if (s < 60) return `${s}s`;
  const [d, h, m] = [Math.floor(s / 86400), Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60)];
  if (d > 0) return h > 0 ? `${d}d ${h}h` : `${d}d`;
  if (h > 0) return m > 0 ? `${h}h ${m}m` : `${h}h`;
  return s % 60 > 0 ? `${m}m ${s % 60}s` : `${m}m`;
}

/** How long an incident lasted (to `resolvedAt`, else to `now`), in seconds. */
function lasted(incident: AlertIncident, now: Date): number {
  const end = incident.resolvedAt ? Date.parse(incident.resolvedAt) : now.getTime();
  return (end - Date.parse(incident.startedAt)) / 1000;
}

/**
 * The one-line summary every chat kind shows ("🔴 API is down: status_code
 * 503 is not < 400", "✅ API is up again after 4m 12s", "🐞 New error in
 * Shop: TypeError: x is undefined", "♻️ Regression in Shop: TypeError: x is
 * undefined (release shop@1.4.1)"). The dispatcher puts
 * it into `AlertMessage.text`; kinds send `text` rather than rebuilding it, so
 * every channel words an alert alike.
 */
export function alertText(event: AlertEvent, incident: AlertIncident | null, extra: TextDetail = {}, now = new Date()): string {
  const emoji = EMOJI[event];
  const test = `${EMOJI.test} Test alert from Vigil: this channel works.`;
  if (isErrorIssueEvent(event)) {
    const issue = extra.errorIssue;
    if (!issue) return test;
    return `${emoji} ${issueHeadline(event, issue)}: ${issue.title}${event === 'error_issue.regressed' && issue.release ? ` (release ${issue.release})` : ''}`;
  }
  if (event === 'test' || !incident) return test;
  const name = incident.monitorName;
  const detail = extra.detail?.trim() || causeWords(incident.cause);
  if (isTrafficDrop(incident)) return trafficText(event, incident, detail, extra, now);
  switch (event) {
    case 'incident.opened': return `${emoji} ${name} is down: ${detail}`;
    case 'incident.resolved': return `${emoji} ${name} is up again after ${formatDuration(lasted(incident, now))}`;
    case 'incident.acknowledged': return extra.actor ? `${emoji} ${name} acknowledged by ${extra.actor}` : `${emoji} ${name} acknowledged`;
    case 'incident.escalated':
      return `${emoji} ${name} is still down after ${formatDuration(lasted(incident, now))}${extra.actor ? `, escalated to ${extra.actor}` : ''}: ${detail}`;
  }
}

/** A traffic drop of an analytics site (docs/analytics.md): `monitorName` is the site's domain. */
function isTrafficDrop(incident: AlertIncident): boolean {
  return incident.cause === 'traffic_drop';
}

/** "📉 Traffic drop on shop.example: 12 pageviews from 14:00 to 15:00 UTC, usually 140", "📈 Traffic back to usual on shop.example after 2h". */
function trafficText(event: 'incident.opened' | 'incident.resolved' | 'incident.acknowledged' | 'incident.escalated', incident: AlertIncident, detail: string, extra: TextDetail, now: Date): string {
  const site = incident.monitorName;
  switch (event) {
    case 'incident.opened': return `📉 Traffic drop on ${site}: ${detail}`;
    case 'incident.resolved': return `📈 Traffic back to usual on ${site} after ${formatDuration(lasted(incident, now))}`;
    case 'incident.acknowledged': return `${EMOJI[event]} Traffic drop on ${site} acknowledged${extra.actor ? ` by ${extra.actor}` : ''}`;
    case 'incident.escalated':
      return `${EMOJI[event]} Traffic on ${site} still low after ${formatDuration(lasted(incident, now))}${extra.actor ? `, escalated to ${extra.actor}` : ''}: ${detail}`;
  }
}

/** "New error in Shop" or "Regression in Shop". */
function issueHeadline(event: 'error_issue.created' | 'error_issue.regressed', issue: AlertErrorIssue): string {
  return `${event === 'error_issue.created' ? 'New error' : 'Regression'} in ${issue.projectName}`;
}

/** A short title for subjects and card headings ("API is down", "New error in Shop: TypeError: …"), without emoji. */
export function alertTitle(message: AlertMessage): string {
  const inc = message.incident;
  if (isErrorIssueEvent(message.event)) return message.errorIssue ? `${issueHeadline(message.event, message.errorIssue)}: ${message.errorIssue.title}` : 'Test alert from Vigil';
  if (message.event === 'test' || !inc) return 'Test alert from Vigil';
  if (isTrafficDrop(inc)) {
    switch (message.event) {
      case 'incident.opened': return `Traffic drop on ${inc.monitorName}`;
      case 'incident.resolved': return `Traffic back to usual on ${inc.monitorName}`;
      case 'incident.acknowledged': return `Traffic drop on ${inc.monitorName}: incident acknowledged`;
      case 'incident.escalated': return `Traffic on ${inc.monitorName} still low (escalated)`;
    }
  }
  switch (message.event) {
    case 'incident.opened': return `${inc.monitorName} is down`;
    case 'incident.resolved': return `${inc.monitorName} is up again`;
    case 'incident.acknowledged': return `${inc.monitorName}: incident acknowledged`;
    case 'incident.escalated': return `${inc.monitorName} is still down (escalated)`;
  }
}

/** Facts about the incident as label/value pairs, for bodies and cards (empty for a test). */
export function incidentFacts(incident: AlertIncident | null): [string, string][] {
  if (!incident) return [];
  const facts: [string, string][] = [
    [isTrafficDrop(incident) ? 'Site' : 'Monitor', incident.monitorName],
    ['Status', incident.status],
    ['Severity', incident.severity],
    ['Cause', causeWords(incident.cause)],
    ['Started', incident.startedAt],
  ];
  if (incident.acknowledgedAt) facts.push(['Acknowledged', incident.acknowledgedAt]);
  if (incident.resolvedAt) facts.push(['Resolved', incident.resolvedAt]);
  facts.push(['Incident', incident.id]);
  return facts;
}

/** Facts about an error issue as label/value pairs (the release and environment of the event behind the alert). */
export function errorIssueFacts(issue: AlertErrorIssue): [string, string][] {
  const facts: [string, string][] = [['Project', issue.projectName], ['Error', issue.title]];
  if (issue.culprit) facts.push(['Culprit', issue.culprit]);
  facts.push(['Level', issue.level]);
  if (issue.release) facts.push(['Release', issue.release]);
  if (issue.environment) facts.push(['Environment', issue.environment]);
  facts.push(['Times seen', String(issue.timesSeen)], ['Issue', issue.id]);
  if (issue.url) facts.push(['Link', issue.url]);
  return facts;
}

/** The facts of whatever the alert is about: the error issue, else the incident (empty for a test). */
export function alertFacts(message: AlertMessage): [string, string][] {
  return message.errorIssue ? errorIssueFacts(message.errorIssue) : incidentFacts(message.incident);
}

/** Cuts text to `max` characters (providers refuse longer fields rather than truncating). */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Masks a credential for display, keeping its last four characters ("…a1b2"). */
export function maskKey(key: string): string {
  return `…${key.slice(-4)}`;
}
