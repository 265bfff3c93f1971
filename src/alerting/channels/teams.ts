import type { AlertEvent, AlertMessage, ChannelKindDef } from './channel';
import { postForResult } from '../http';
import { alertFacts, alertTitle } from './text';
import { hostOnly, parseHttpUrl, urlSecrets } from './url';

const TITLE_COLOR: Record<AlertEvent, string> = {
  'incident.opened': 'Attention',
  'incident.escalated': 'Attention',
  'incident.acknowledged': 'Warning',
  'incident.resolved': 'Good',
  'error_issue.created': 'Attention',
  'error_issue.regressed': 'Attention',
  test: 'Accent',
};

/** The Adaptive Card message Teams (incoming webhooks and Workflows alike) accepts. */
export function teamsCard(message: AlertMessage): Record<string, unknown> {
  const facts = alertFacts(message);
  const body: Record<string, unknown>[] = [
    { type: 'TextBlock', text: alertTitle(message), weight: 'Bolder', size: 'Medium', color: TITLE_COLOR[message.event], wrap: true },
    { type: 'TextBlock', text: message.text, wrap: true },
  ];
  if (facts.length) body.push({ type: 'FactSet', facts: facts.map(([title, value]) => ({ title, value })) });
  return {
    type: 'message',
    attachments: [{
      contentType: 'application/vnd.microsoft.card.adaptive',
      contentUrl: null,
      content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body },
    }],
  };
}

/**
 * `teams`: a Microsoft Teams incoming-webhook or Workflows URL. The URL carries
 * its signature, so only scheme://host/… is shown. Body: an Adaptive Card 1.4
 * message (title, the one-line text, a FactSet of the incident or error issue). Workflows
 * answer 202, legacy connectors 200.
 */
export const teams: ChannelKindDef = {
  creatable: true,
  needsConfirmation: false,
  hasSecret: false,
  parseTarget(target) {
    const url = parseHttpUrl(target, 'a Microsoft Teams webhook or Workflows URL');
    return { target: url.href, display: hostOnly(url), config: {}, secretStored: true };
  },
  deliver(channel, message, ctx) {
    return postForResult(channel.target, teamsCard(message), { ctx, secrets: urlSecrets(channel.target) });
  },
};
