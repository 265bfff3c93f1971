import type { Config } from '../../config';
import type { NetPolicy } from '../../net/policy';

/** The channel kinds Vigil knows; the first eight can be created through the API. */
export type ChannelKind = 'email' | 'webhook' | 'telegram' | 'slack' | 'teams' | 'discord' | 'pagerduty' | 'jsm'
  | 'sms' | 'whatsapp' | 'satellite' | 'push';

/** What happened, as every channel is told about it. */
export type AlertEvent = 'incident.opened' | 'incident.acknowledged' | 'incident.resolved' | 'incident.escalated'
  | 'error_issue.created' | 'error_issue.regressed' | 'test';

/** The events about an error issue (a new issue, a regression) rather than an incident. */
export const ERROR_ISSUE_EVENTS = ['error_issue.created', 'error_issue.regressed'] as const satisfies readonly AlertEvent[];

/** True for an alert about an error issue. */
export function isErrorIssueEvent(event: AlertEvent): event is (typeof ERROR_ISSUE_EVENTS)[number] {
  return (ERROR_ISSUE_EVENTS as readonly string[]).includes(event);
}

/** The incident an alert is about (null for a test message). */
export interface AlertIncident {
  id: string;
  title: string;
  cause: string;
  severity: string;
  status: string;
  monitorId: string;
  monitorName: string;
  startedAt: string;
  acknowledgedAt: string | null;
  resolvedAt: string | null;
}

/**
 * The error issue an alert is about (null for incident and test alerts):
 * `release` and `environment` are those of the event that caused the alert.
 */
export interface AlertErrorIssue {
  id: string;
  projectId: string;
  projectName: string;
  title: string;
  culprit: string | null;
  level: string;
  release: string | null;
  environment?: string | null;
  timesSeen: number;
  /** The issue's address in the API (`GET /api/v1/errors/issues/{id}`, read with a key). */
  url?: string | null;
}

/** One alert to deliver. `text` is a one-line human summary for chat kinds. */
export interface AlertMessage {
  /** Stable id of this alert (the delivery id): receivers de-duplicate retries with it. */
  id: string;
  event: AlertEvent;
  incident: AlertIncident | null;
  /** Set for `error_issue.*` events; null otherwise. */
  errorIssue: AlertErrorIssue | null;
  text: string;
  occurredAt: string;
}

/** A stored channel as a kind sees it: its real target and secret, decrypted. */
export interface ChannelSecrets { id: string; name: string; target: string; secret: string | null; config: Record<string, string> }

/** Provider endpoints and credentials from the server configuration (tests point them at local fakes). */
export type Providers = Config['providers'];

/** Kinds that cannot deliver on this server: enrolled kinds, and those whose provider is not configured. */
export function undeliverableKinds(p: Pick<Providers, 'smtpUrl' | 'telegramBotToken' | 'smsAccountSid'>): string[] {
  return ['whatsapp', 'satellite', 'push', ...(p.smtpUrl ? [] : ['email']), ...(p.telegramBotToken ? [] : ['telegram']), ...(p.smsAccountSid ? [] : ['sms'])];
}

/** What a delivery may use. */
export interface DeliveryContext { net: NetPolicy; providers: Providers; signal: AbortSignal; baseUrl: string }

/** The outcome of one attempt. `permanent` failures are not retried (a refused key, a 4xx). */
export interface DeliveryResult { delivered: boolean; error: string | null; permanent?: boolean }

/** A validated target: what is stored sealed, what is shown, and the non-secret config. */
export interface ParsedTarget {
  /** The target to deliver to (stored sealed). */
  target: string;
  /** The form shown in reads (credentials masked). */
  display: string;
  /** Non-secret config shown in the list. */
  config: Record<string, string>;
  /** True when the target or a secret is a credential the list must not show. */
  secretStored: boolean;
}

/** One channel kind: one file per kind under src/alerting/channels/. */
export interface ChannelKindDef {
  /** False for kinds the receiving person enrols (sms, whatsapp, satellite, push). */
  creatable: boolean;
  /** Email: nothing but a confirmation message is sent until the recipient follows its link. */
  needsConfirmation: boolean;
  /** True when the channel gets a signing secret at creation (webhook). */
  hasSecret: boolean;
  /** Validates `target`; throws ApiError 400 with details.field `target` when malformed. */
  parseTarget(target: string): ParsedTarget;
  /** Sends one alert. Never throws for a provider failure: that is `delivered: false` with the provider's words. */
  deliver(channel: ChannelSecrets, message: AlertMessage, ctx: DeliveryContext): Promise<DeliveryResult>;
  /** Sends the confirmation message with `link` (email only). */
  sendConfirmation?(channel: ChannelSecrets, link: string, ctx: DeliveryContext): Promise<DeliveryResult>;
}
