import type { AlertErrorIssue, AlertIncident, AlertMessage, ChannelKindDef, DeliveryContext, DeliveryResult } from './channel';
import { invalid } from '../../pipeline/errors';
import { postForResult } from '../http';
import { alertTitle, causeWords, clip, maskKey } from './text';

/** Vigil severities as JSM priorities (P1 highest). */
export function jsmPriority(severity: string): string {
  return ({ critical: 'P1', major: 'P2', minor: 'P3' } as Record<string, string>)[severity] ?? 'P3';
}

function post(path: string, body: Record<string, unknown>, key: string, ctx: DeliveryContext): Promise<DeliveryResult> {
  return postForResult(`${ctx.providers.jsmApiUrl}${path}`, body, { ctx, headers: { Authorization: `GenieKey ${key}` }, secrets: [key] });
}

/** The create-alert body; the alias (the incident id) lets later acknowledge/close calls and re-sends find it. */
export function createAlertBody(message: AlertMessage, incident: AlertIncident): Record<string, unknown> {
  return {
    message: clip(alertTitle(message), 130), // JSM caps message at 130 characters
    alias: incident.id,
    description: clip(message.text, 15000),
    priority: jsmPriority(incident.severity),
    source: 'Vigil',
    entity: clip(incident.monitorName, 512),
    details: {
      monitor: incident.monitorName, monitorId: incident.monitorId, cause: causeWords(incident.cause),
      status: incident.status, severity: incident.severity, incidentId: incident.id, startedAt: incident.startedAt,
    },
  };
}

/** Sentry-style levels as JSM priorities (fatal P1 … debug P5). */
export function jsmLevelPriority(level: string): string {
  return ({ fatal: 'P1', error: 'P3', warning: 'P4', info: 'P5', debug: 'P5' } as Record<string, string>)[level] ?? 'P3';
}

/** The create-alert body of a new or regressed error issue; the alias is the issue id (JSM folds a regression into an alert still open). */
export function issueAlertBody(message: AlertMessage, issue: AlertErrorIssue): Record<string, unknown> {
  const details: Record<string, string> = { project: issue.projectName, projectId: issue.projectId, issueId: issue.id, level: issue.level, timesSeen: String(issue.timesSeen) };
  if (issue.culprit) details.culprit = issue.culprit;
  if (issue.release) details.release = issue.release;
  if (issue.environment) details.environment = issue.environment;
  if (issue.url) details.url = issue.url;
  return {
    message: clip(alertTitle(message), 130),
    alias: issue.id,
    description: clip(message.text, 15000),
    priority: jsmLevelPriority(issue.level),
    source: 'Vigil',
    entity: clip(issue.projectName, 512),
    tags: [message.event],
    details,
  };
}

function action(alias: string, verb: 'acknowledge' | 'close'): string {
  return `/${encodeURIComponent(alias)}/${verb}?identifierType=alias`;
}

/**
 * `jsm`: a Jira Service Management Operations API-integration key, sent as
 * `Authorization: GenieKey <key>` to JSM_API_URL (the alerts API).
 * opened/escalated → create (JSM de-duplicates open alerts by alias),
 * acknowledged → `/<alias>/acknowledge?identifierType=alias`, resolved →
 * `/<alias>/close?identifierType=alias`. A new or regressed error issue →
 * create with the issue id as alias. A test creates `vigil-test-<id>`
 * and closes it. JSM answers 202 (the request is queued).
 */
export const jsm: ChannelKindDef = {
  creatable: true,
  needsConfirmation: false,
  hasSecret: false,
  parseTarget(target) {
    const key = typeof target === 'string' ? target.trim() : '';
    if (!key || /\s/.test(key) || key.length > 200) throw invalid('target', 'must be the API key of a JSM API integration (no spaces)');
    return { target: key, display: maskKey(key), config: {}, secretStored: true };
  },
  async deliver(channel, message, ctx) {
    const key = channel.target;
    const note = { source: 'Vigil', note: message.text };
    if (message.event === 'test') {
      const alias = `vigil-test-${message.id}`;
      const created = await post('', {
        message: 'Test alert from Vigil', alias, description: message.text, priority: 'P5', source: 'Vigil', details: { test: 'true' },
      }, key, ctx);
      if (!created.delivered) return created;
      const closed = await post(action(alias, 'close'), note, key, ctx);
      return closed.delivered ? closed : { ...closed, error: `the test alert was created but could not be closed: ${closed.error}` };
    }
    if (message.errorIssue) return post('', issueAlertBody(message, message.errorIssue), key, ctx);
    const incident = message.incident;
    if (!incident) return { delivered: false, error: 'this alert has no incident to send', permanent: true };
    switch (message.event) {
      case 'incident.acknowledged': return post(action(incident.id, 'acknowledge'), note, key, ctx);
      case 'incident.resolved': return post(action(incident.id, 'close'), note, key, ctx);
      default: return post('', createAlertBody(message, incident), key, ctx);
    }
  },
};
