/** The channel kinds the app creates and changes, as createChannel's table in the contract describes them. */
import type { Schema } from './api';

export type ChannelKind = Schema<'CreateChannelBody'>['kind'];

export interface ChannelKindInfo {
  kind: ChannelKind;
  label: string;
  /** What the target is, the label of its field. */
  target: string;
  /** Reads show the target whole; for the others it is a credential the server masks (`https://host/…`, `…abcd`), so a form cannot start from it. */
  shownWhole: boolean;
}

export const CHANNEL_KINDS: ChannelKindInfo[] = [
  { kind: 'email', label: 'E-mail', target: 'E-mail address', shownWhole: true },
  { kind: 'webhook', label: 'Webhook', target: 'URL (https:// or http://)', shownWhole: false },
  { kind: 'slack', label: 'Slack', target: 'Incoming-webhook URL', shownWhole: false },
  { kind: 'teams', label: 'Microsoft Teams', target: 'Incoming-webhook or Workflows URL', shownWhole: false },
  { kind: 'discord', label: 'Discord', target: 'Webhook URL', shownWhole: false },
  { kind: 'telegram', label: 'Telegram', target: 'Chat id (-100… or @channel)', shownWhole: true },
  { kind: 'pagerduty', label: 'PagerDuty', target: 'Events API v2 routing key', shownWhole: false },
  { kind: 'jsm', label: 'Jira Service Management', target: 'API key of the integration', shownWhole: false },
];

/**
 * A creatable kind's description; undefined for the kinds whose recipient
 * enrols the target (sms, whatsapp, satellite, push): the API neither
 * creates them nor changes their target (400 `target_not_changeable`).
 */
export const channelKind = (kind: string): ChannelKindInfo | undefined => CHANNEL_KINDS.find((k) => k.kind === kind);

/** What a new address of a kind that asks first (email) means, said on create and on change alike. */
export const CONFIRMATION_NOTE = 'The address gets one message asking to confirm; nothing else until it agrees.';
