import type { AlertEvent, ChannelKindDef } from './channel';
import { postForResult } from '../http';
import { alertFacts, alertTitle, clip } from './text';
import { hostOnly, parseHttpUrl, urlSecrets } from './url';

/** Embed colours (RGB integers) by event: red down, amber acknowledged, green up, blue test; red for a new error, orange for a regression. */
export const DISCORD_COLORS: Record<AlertEvent, number> = {
  'incident.opened': 0xe5484d,
  'incident.escalated': 0xe5484d,
  'incident.acknowledged': 0xf5a524,
  'incident.resolved': 0x30a46c,
  'error_issue.created': 0xe5484d,
  'error_issue.regressed': 0xf76b15,
  test: 0x3e63dd,
};

/**
 * `discord`: a Discord webhook URL (`https://discord.com/api/webhooks/…`; any
 * http(s) URL is accepted for gateways and tests). The path carries the token,
 * so only scheme://host/… is shown. Body: `{content, embeds: [{title,
 * description, color, timestamp}], allowed_mentions: {parse: []}}` — mentions
 * are disabled so a monitor named "@everyone" cannot ping a whole server.
 * Discord answers 204 (or 200 with ?wait=true).
 */
export const discord: ChannelKindDef = {
  creatable: true,
  needsConfirmation: false,
  hasSecret: false,
  parseTarget(target) {
    const url = parseHttpUrl(target, 'a Discord webhook URL (https://discord.com/api/webhooks/…)');
    return { target: url.href, display: hostOnly(url), config: {}, secretStored: true };
  },
  deliver(channel, message, ctx) {
    const facts = alertFacts(message);
    const description = facts.length ? facts.map(([k, v]) => `**${k}:** ${v}`).join('\n') : 'This channel works.';
    // Discord's limits: content 2000, title 256, description 4096 characters.
    const body = {
      content: clip(message.text, 2000),
      embeds: [{ title: clip(alertTitle(message), 256), description: clip(description, 4096), color: DISCORD_COLORS[message.event], timestamp: message.occurredAt }],
      allowed_mentions: { parse: [] },
    };
    return postForResult(channel.target, body, { ctx, secrets: urlSecrets(channel.target) });
  },
};
