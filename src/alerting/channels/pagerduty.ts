import type { AlertErrorIssue, AlertIncident, AlertMessage, ChannelKindDef, DeliveryContext, DeliveryResult } from './channel';
import { invalid } from '../../pipeline/errors';
import { postForResult } from '../http';
import { clip, maskKey } from './text';

const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;

/** Vigil severities as PagerDuty's (critical, error, warning, info). */
export function pagerdutySeverity(severity: string): string {
  return ({ critical: 'critical', major: 'error', minor: 'warning' } as Record<string, string>)[severity] ?? 'error';
}

/** A trigger event (Events API v2) for an incident; the dedup key is the incident id, so later events find it. */
export function triggerEvent(routingKey: string, message: AlertMessage, incident: AlertIncident): Record<string, unknown> {
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: incident.id,
    payload: {
      summary: clip(message.text, 1024), // PagerDuty refuses summaries over 1024 characters
      source: incident.monitorName,
      severity: pagerdutySeverity(incident.severity),
      timestamp: incident.startedAt,
      component: incident.monitorId,
      custom_details: { cause: incident.cause, status: incident.status, incidentId: incident.id },
    },
    client: 'Vigil',
  };
}

/** Sentry-style levels as PagerDuty's severities (fatal → critical, warning → warning, info and debug → info). */
export function pagerdutyLevel(level: string): string {
  return ({ fatal: 'critical', error: 'error', warning: 'warning', info: 'info', debug: 'info' } as Record<string, string>)[level] ?? 'error';
}

/**
 * A trigger event for a new or regressed error issue; the dedup key is the
 * issue id, so a regression while PagerDuty's alert is still open adds to it
 * and one after it was resolved there opens a new one.
 */
export function issueTriggerEvent(routingKey: string, message: AlertMessage, issue: AlertErrorIssue): Record<string, unknown> {
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: issue.id,
    payload: {
      summary: clip(message.text, 1024),
      source: issue.projectName,
      severity: pagerdutyLevel(issue.level),
      timestamp: message.occurredAt,
      component: issue.projectId,
      class: message.event,
      custom_details: {
        issueId: issue.id, title: issue.title, culprit: issue.culprit, level: issue.level, release: issue.release,
        environment: issue.environment ?? null, timesSeen: issue.timesSeen, url: issue.url ?? null,
      },
    },
    client: 'Vigil',
  };
}

function send(body: Record<string, unknown>, key: string, ctx: DeliveryContext): Promise<DeliveryResult> {
  return postForResult(ctx.providers.pagerdutyEventsUrl, body, { ctx, secrets: [key] });
}

/** A test: trigger an event under a throwaway dedup key, then resolve it at once so nobody stays paged. */
async function sendTest(key: string, message: AlertMessage, ctx: DeliveryContext): Promise<DeliveryResult> {
  const dedup = `vigil-test-${message.id}`;
  const triggered = await send({
    routing_key: key, event_action: 'trigger', dedup_key: dedup, client: 'Vigil',
    payload: { summary: clip(message.text, 1024), source: 'Vigil', severity: 'info', timestamp: message.occurredAt, custom_details: { test: true } },
  }, key, ctx);
  if (!triggered.delivered) return triggered;
  const resolved = await send({ routing_key: key, event_action: 'resolve', dedup_key: dedup }, key, ctx);
  return resolved.delivered ? resolved : { ...resolved, error: `the test alert was triggered but could not be resolved: ${resolved.error}` };
}

/**
 * `pagerduty`: an Events API v2 routing key, POSTed to PAGERDUTY_EVENTS_URL.
 * opened/escalated → trigger (re-triggering the same dedup key only adds to
 * the alert's log), acknowledged → acknowledge, resolved → resolve; the
 * latter two carry only routing_key, event_action and dedup_key. A new or
 * regressed error issue → trigger with the issue id as dedup key. PagerDuty
 * answers 202.
 */
export const pagerduty: ChannelKindDef = {
  creatable: true,
  needsConfirmation: false,
  hasSecret: false,
  parseTarget(target) {
    const key = typeof target === 'string' ? target.trim() : '';
    if (!ROUTING_KEY.test(key)) throw invalid('target', 'must be a 32-character PagerDuty Events API v2 routing key');
    return { target: key, display: maskKey(key), config: {}, secretStored: true };
  },
  async deliver(channel, message, ctx) {
    const key = channel.target;
    if (message.event === 'test') return sendTest(key, message, ctx);
    if (message.errorIssue) return send(issueTriggerEvent(key, message, message.errorIssue), key, ctx);
    const incident = message.incident;
    if (!incident) return { delivered: false, error: 'this alert has no incident to send', permanent: true };
    switch (message.event) {
      case 'incident.acknowledged':
      case 'incident.resolved': {
        const action = message.event === 'incident.acknowledged' ? 'acknowledge' : 'resolve';
        return send({ routing_key: key, event_action: action, dedup_key: incident.id }, key, ctx);
      }
      default:
        return send(triggerEvent(key, message, incident), key, ctx);
    }
  },
};
