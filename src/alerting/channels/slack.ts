import type { ChannelKindDef } from './channel';
import { postForResult } from '../http';
import { clip } from './text';
import { hostOnly, parseHttpUrl, urlSecrets } from './url';

/** Slack's mrkdwn treats &, < and > as control characters (links, mentions); they are escaped as Slack asks. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * `slack`: an incoming-webhook URL. Production URLs are
 * `https://hooks.slack.com/services/…`, but any http(s) URL is accepted so
 * self-hosted gateways (Mattermost, Rocket.Chat, relays) and tests work. The
 * URL path is the credential: it is stored sealed and shown as scheme://host/….
 * Body: `{text, blocks: [{type: 'section', text: {type: 'mrkdwn', text}}]}`;
 * Slack answers 200 "ok", or 4xx with a word like "invalid_token".
 */
export const slack: ChannelKindDef = {
  creatable: true,
  needsConfirmation: false,
  hasSecret: false,
  parseTarget(target) {
    const url = parseHttpUrl(target, 'a Slack incoming-webhook URL (https://hooks.slack.com/services/…)');
    return { target: url.href, display: hostOnly(url), config: {}, secretStored: true };
  },
  deliver(channel, message, ctx) {
    const text = slackEscape(message.text);
    // A section's text is capped at 3000 characters; the top-level text is the notification fallback.
    const body = { text: clip(text, 3000), blocks: [{ type: 'section', text: { type: 'mrkdwn', text: clip(text, 3000) } }] };
    return postForResult(channel.target, body, { ctx, secrets: urlSecrets(channel.target) });
  },
};
