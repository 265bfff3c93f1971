import type { ColumnType, Generated } from 'kysely';

/** A timestamp column: read as Date, written as Date or ISO string. */
type Ts = ColumnType<Date, Date | string, Date | string>;
type TsDefault = ColumnType<Date, Date | string | undefined, Date | string>;
type TsNull = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface PlansTable {
  code: string;
  name: string;
  rank: number;
  monitor_cap: number | null;
  interval_floor_seconds: number;
  history_retention_days: number;
  sms_included: boolean;
  audit_log_included: boolean;
  status_page_cap: number | null;
  member_cap: number | null;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  plan: string;
  setup_dismissed_at: TsNull;
  created_at: TsDefault;
  /** Add-on packs bought on top of the plan (each adds ADD_ON_PACK to the caps). */
  add_on_packs: ColumnType<number, number | undefined, number>;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  created_at: TsDefault;
  /** scrypt hash (src/crypto/passwords.ts); null until the person sets one. */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  password_changed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface SessionsTable {
  id: string;
  token_hash: Buffer;
  user_id: string;
  /** The organisation the session acts in; null when it went (re-resolved on the next request). */
  organization_id: string | null;
  created_at: TsDefault;
  last_seen_at: TsDefault;
  /** Absolute end: 30 days after sign-in. */
  expires_at: Date;
  user_agent: string | null;
  ip_address: string | null;
}

export interface PasswordResetsTable {
  id: string;
  user_id: string;
  token_hash: Buffer;
  created_at: TsDefault;
  expires_at: Date;
}

export interface SubscriptionsTable {
  organization_id: string;
  /** web_processor (Stripe), app_store, manual. */
  source: string;
  plan: string;
  /** active, trialing, past_due, canceled. */
  status: string;
  cadence: string | null;
  current_period_end: Date | null;
  cancel_at: Date | null;
  add_on_packs: ColumnType<number, number | undefined, number>;
  external_customer_id: string | null;
  external_subscription_id: string | null;
  event_at: Date | null;
  updated_at: TsDefault;
}

export interface ReceiptsTable {
  id: string;
  organization_id: string;
  source: string;
  external_id: string;
  amount_cents: ColumnType<string, number, number>;
  currency: string;
  issued_at: Date;
  url: string | null;
}

export interface BillingEventsTable { id: string; source: string; received_at: TsDefault }

export interface ErrorProjectsTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  /** The number in the DSN. */
  ref: ColumnType<string, string | undefined, never>;
  public_key: string;
  name: string;
  platform: string | null;
  created_at: TsDefault;
}

export interface ErrorEventsTable {
  seq: ColumnType<string, never, never>;
  project_id: string;
  organization_id: string;
  event_id: string;
  received_at: TsDefault;
  /** The event as the SDK sent it: JSON text (migration 0028; checked when it was parsed at ingestion). */
  payload: string;
  /** What grouping reads (src/errors/ingest.ts EventSummary), as JSON; null before migration 0028. */
  summary: ColumnType<unknown, string | null | undefined, string | null>;
  issue_id: string | null;
}

export interface ErrorIssuesTable {
  id: string;
  project_id: string;
  organization_id: string;
  fingerprint: string;
  title: string;
  type: string | null;
  value: string | null;
  culprit: string | null;
  level: string;
  status: ColumnType<string, string | undefined, string>;
  times_seen: ColumnType<string, number | string, number | string>;
  first_seen_at: Date;
  last_seen_at: Date;
  first_release: string | null;
  last_release: string | null;
  last_event_seq: string | null;
  resolved_in_release: string | null;
  resolved_at: Date | null;
  ignored_until: Date | null;
}

/** One entry of an issue's timeline: first_seen, regressed (by an event), resolved, ignored, unresolved (by a person). */
export interface ErrorIssueEventsTable {
  seq: ColumnType<string, never, never>;
  issue_id: string;
  organization_id: string;
  kind: string;
  at: TsDefault;
  release: string | null;
  environment: string | null;
  actor_type: string | null;
  actor_id: string | null;
  actor_name: string | null;
}

export interface ErrorProjectChannelsTable { project_id: string; channel_id: string }

export interface ErrorIssueHoursTable { issue_id: string; hour: Date; count: ColumnType<string, number, number> }
export interface ErrorIssueUsersTable { issue_id: string; user_key: string }
export interface ErrorReleasesTable { project_id: string; release: string; first_seen_seq: ColumnType<string, never, never> }

export interface ErrorSourcemapsTable {
  id: string;
  project_id: string;
  organization_id: string;
  filename: string;
  debug_id: string | null;
  release: string | null;
  map_gzip: Buffer;
  size_bytes: number;
  created_at: TsDefault;
}

export interface ErrorSymbolBuildsTable {
  id: string;
  project_id: string;
  organization_id: string;
  platform: string;
  name: string;
  release: string | null;
  debug_ids: ColumnType<string[], string[] | undefined, string[]>;
  size_bytes: ColumnType<string, number, number>;
  created_at: TsDefault;
}

export interface ErrorSymbolFilesTable {
  build_id: string;
  project_id: string;
  debug_id: string | null;
  content_gzip: Buffer;
}

export interface SmsEnrolmentsTable {
  membership_id: string;
  channel_id: string;
  code_hash: Buffer;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: TsDefault;
  expires_at: Date;
}

export interface InvitationsTable {
  id: string;
  organization_id: string;
  email: string;
  role: string;
  /** null: every workspace. */
  workspace_ids: string[] | null;
  token_hash: Buffer;
  invited_by_membership_id: string | null;
  created_at: TsDefault;
  expires_at: Date;
}

export interface MembershipsTable {
  id: string;
  organization_id: string;
  user_id: string;
  role: string;
  /** null: every workspace of the organisation. */
  workspace_ids: string[] | null;
  created_at: TsDefault;
}

export interface WorkspacesTable {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  client_reference: string | null;
  is_default: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: TsDefault;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  membership_id: string;
  name: string;
  prefix: string;
  token_hash: Buffer;
  scopes: ColumnType<string[], string[] | undefined, string[]>;
  workspace_ids: string[] | null;
  created_at: TsDefault;
  last_used_at: TsNull;
  expires_at: TsNull;
  revoked_at: TsNull;
}

export interface MonitorsTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  kind: string;
  /** The whole config document, encrypted (it may hold credentials). */
  config_enc: string;
  interval_seconds: number;
  confirmations: ColumnType<number, number | undefined, number>;
  depends_on: ColumnType<string[], string[] | undefined, string[]>;
  probe_id: string | null;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  paused: ColumnType<boolean, boolean | undefined, boolean>;
  status: ColumnType<string, string | undefined, string>;
  status_since: TsDefault;
  last_checked_at: TsNull;
  last_response_time_ms: number | null;
  last_message: string | null;
  last_check_detail: ColumnType<unknown | null, string | null | undefined, string | null>;
  uptime_24h: number | null;
  uptime_30d: number | null;
  created_at: TsDefault;
  updated_at: TsDefault;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  heartbeat_token_enc: string | null;
  heartbeat_token_hash: Buffer | null;
  last_ping_at: TsNull;
  last_ping_kind: string | null;
  /** `agent` monitors: the agent watched (also in the sealed config), so a new sample brings the check forward. */
  agent_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * When each monitor is next due and who holds it (kept beside `monitors` by a
 * trigger; migration 0031 says why it is a table of its own).
 */
export interface MonitorScheduleTable {
  monitor_id: string;
  runnable: boolean;
  probe_id: string | null;
  next_due_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Until when a worker's (or probe's) claim holds; null: not claimed. */
  lease_until: TsNull;
}

export interface HostsTable {
  id: string;
  organization_id: string;
  name: string;
  provider: string | null;
  address: string | null;
  notes: string | null;
  created_at: TsDefault;
}

export interface MonitorHostsTable {
  monitor_id: string;
  host_id: string;
}

export interface IncidentsTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  monitor_id: string | null;
  title: string;
  cause: string;
  severity: string;
  status: string;
  root_incident_id: string | null;
  started_at: TsDefault;
  acknowledged_at: TsNull;
  resolved_at: TsNull;
  postmortem_body: string | null;
  postmortem_author: string | null;
  postmortem_updated_at: TsNull;
  escalation_policy_id: string | null;
  escalation_step: ColumnType<number, number | undefined, number>;
  /** A traffic drop's site (monitor_id null then). */
  analytics_site_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface NotificationChannelsTable {
  id: string;
  organization_id: string;
  workspace_id: string | null;
  owner_membership_id: string | null;
  kind: string;
  name: string;
  target: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  confirmed_at: TsNull;
  created_at: TsDefault;
  target_enc: string | null;
  secret_enc: string | null;
  config: ColumnType<Record<string, string>, string | undefined, string>;
  confirmation_token_hash: Buffer | null;
  confirmation_sent_at: TsNull;
}

export interface MonitorChannelsTable { monitor_id: string; channel_id: string }

export interface DeliveriesTable {
  id: string;
  organization_id: string;
  channel_id: string | null;
  incident_id: string | null;
  error_issue_id: ColumnType<string | null, string | null | undefined, string | null>;
  event: string;
  status: ColumnType<string, string | undefined, string>;
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  created_at: TsDefault;
  delivered_at: TsNull;
}

export interface DeliveryAttemptsTable {
  seq: Generated<number>;
  delivery_id: string;
  at: TsDefault;
  ok: boolean;
  error: string | null;
  duration_ms: number | null;
}

export interface MaintenanceWindowsTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  title: string;
  description: string | null;
  starts_at: Ts;
  ends_at: Ts;
  timezone: string;
  monitor_ids: string[];
  recurrence_rule: string | null;
  keep_checking: boolean;
  show_on_status_page: boolean;
  notify_subscribers: boolean;
  created_at: TsDefault;
}

export interface OncallSchedulesTable {
  id: string;
  organization_id: string;
  workspace_id: string | null;
  name: string;
  timezone: string;
  shift_length_hours: number;
  handoff_time: string;
  participant_ids: string[];
  created_at: TsDefault;
  /** When the rotation last (re)started; null: at creation (migration 0034). */
  rotation_from: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface EscalationPoliciesTable {
  id: string;
  organization_id: string;
  name: string;
  repeat: ColumnType<number, number | undefined, number>;
  steps: ColumnType<{ afterMinutes: number; targetType: 'schedule' | 'user' | 'channel'; targetId: string }[], string, string>;
  monitor_ids: ColumnType<string[], string[] | undefined, string[]>;
  created_at: TsDefault;
}

export interface OncallOverridesTable {
  id: string;
  organization_id: string;
  schedule_id: string;
  user_id: string;
  starts_at: Ts;
  ends_at: Ts;
  created_at: TsDefault;
}

export interface FeedTokensTable {
  organization_id: string;
  token_hash: Buffer;
  created_at: TsDefault;
}

export interface StatusPagesTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  slug: string;
  created_at: TsDefault;
  headline: string | null;
  description: string | null;
  logo_url: string | null;
  custom_css: string | null;
  /** scrypt, `scrypt$<N>$<r>$<p>$<salt>$<hash>`; null when none is set. */
  password_hash: string | null;
  visibility: ColumnType<string, string | undefined, string>;
  theme_accent: ColumnType<string, string | undefined, string>;
  language: ColumnType<string, string | undefined, string>;
  history_days: ColumnType<number, number | undefined, number>;
  show_response_times: ColumnType<boolean, boolean | undefined, boolean>;
  show_incident_history: ColumnType<boolean, boolean | undefined, boolean>;
  subscribers_enabled: ColumnType<boolean, boolean | undefined, boolean>;
  hide_service_branding: ColumnType<boolean, boolean | undefined, boolean>;
  group_by_host: ColumnType<boolean, boolean | undefined, boolean>;
  custom_domain: string | null;
  domain_token: string | null;
  domain_verified_at: TsNull;
  domain_checked_at: TsNull;
  domain_found: ColumnType<string[], string[] | undefined, string[]>;
  domain_error: string | null;
  updated_at: TsDefault;
}

export interface StatusPageComponentsTable {
  id: string;
  page_id: string;
  organization_id: string;
  monitor_id: string;
  display_name: string | null;
  position: number;
  created_at: TsDefault;
}

export interface StatusPageSubscribersTable {
  id: string;
  page_id: string;
  organization_id: string;
  kind: string;
  target: string;
  target_enc: string | null;
  target_key: string;
  confirm_token_hash: Buffer | null;
  confirm_sent_at: TsNull;
  confirmed_at: TsNull;
  created_at: TsDefault;
}

export interface AuditLogTable {
  seq: Generated<number>;
  id: string;
  organization_id: string;
  at: TsDefault;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  /** The person behind the actor when the change was made (a key's creator, a session's person); null for the service. */
  actor_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  actor_user_email: ColumnType<string | null, string | null | undefined, string | null>;
  actor_user_name: ColumnType<string | null, string | null | undefined, string | null>;
  action: string;
  resource_type: string;
  resource_id: string | null;
  workspace_id: string | null;
  changes: ColumnType<Record<string, unknown>, string, string>;
}

export interface CheckResultsTable {
  monitor_id: string;
  organization_id: string;
  at: Ts;
  outcome: string;
  response_time_ms: number | null;
  cause: string | null;
  message: string | null;
  detail: ColumnType<unknown | null, string | null, string | null>;
  probe_id: string | null;
}

export interface RollupHourlyTable {
  monitor_id: string;
  hour: Ts;
  checks: number;
  failures: number;
  degraded: number;
  response_sum_ms: number;
  response_count: number;
  readings: ColumnType<Record<string, { sum: number; count: number; min: number; max: number; unit: string | null }> | null, string | null, string | null>;
}

export interface RollupDailyTable {
  monitor_id: string;
  day: ColumnType<string, string, string>;
  checks: number;
  failures: number;
  degraded: number;
  downtime_seconds: number;
  response_sum_ms: number;
  response_count: number;
}

export interface IncidentEventsTable {
  seq: Generated<number>;
  id: string;
  incident_id: string;
  organization_id: string;
  kind: string;
  at: TsDefault;
  actor_type: string | null;
  actor_id: string | null;
  actor_name: string | null;
  message: string | null;
  public: ColumnType<boolean, boolean | undefined, boolean>;
  from_status: string | null;
  to_status: string | null;
}

export interface ProbesTable {
  id: string;
  organization_id: string;
  name: string;
  prefix: string;
  token_hash: Buffer;
  created_at: TsDefault;
  last_seen_at: TsNull;
  version: string | null;
  hostname: string | null;
  revoked_at: TsNull;
}

/** Web analytics (migration 0019, docs/analytics.md). */
export interface AnalyticsSitesTable {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  domain: string;
  public_id: string;
  created_at: TsDefault;
  traffic_alerting: ColumnType<boolean, boolean | undefined, boolean>;
  traffic_checked_at: TsNull;
  traffic_incident_id: string | null;
}
export interface AnalyticsSiteChannelsTable { site_id: string; channel_id: string }
export interface AnalyticsSaltsTable { site_id: string; day: ColumnType<string, string, string>; salt: Buffer }
/** The columns an event carries from ingestion to the raw table. */
export interface AnalyticsEventColumns {
  site_id: string;
  at: Ts;
  name: string;
  pathname: string;
  hostname: string;
  referrer: string | null;
  referrer_source: string | null;
  country: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  props: ColumnType<Record<string, string> | null, string | null, string | null>;
  /** The visitor hash as a signed 64-bit integer (pg returns int8 as a string). */
  visitor: ColumnType<string, string | bigint, string | bigint>;
  interactive: boolean;
}
export interface AnalyticsBufferTable extends AnalyticsEventColumns {
  seq: ColumnType<string, never, never>;
  /** In the first 30 minutes of a UTC day, the visitor hash under the day before's salt (migration 0029), to continue a visit across midnight. */
  previous_visitor: ColumnType<string | null, string | bigint | null, string | bigint | null>;
}
export interface AnalyticsEventsTable extends AnalyticsEventColumns { session: ColumnType<string, string | bigint, string | bigint> }
export interface AnalyticsSessionsTable {
  site_id: string;
  visitor: ColumnType<string, string | bigint, string | bigint>;
  session: ColumnType<string, string | bigint, string | bigint>;
  started_at: Ts;
  last_at: Ts;
  pageviews: number;
  interactive_events: number;
  entry: ColumnType<Record<string, string>, string, string>;
}
/** The (dimension, value) pairs a visitor was counted under that day, as 8-byte hashes concatenated (migration 0022). */
export interface AnalyticsSeenTable { site_id: string; day: ColumnType<string, string, string>; visitor: ColumnType<string, string | bigint, string | bigint>; keys: Buffer }
/** A roll-up row: per site, dimension ('' for the totals), value and hour (or day). */
interface AnalyticsRollupColumns {
  site_id: string;
  dimension: string;
  value: string;
  visitors: ColumnType<string, number | undefined, number>;
  pageviews: ColumnType<string, number | undefined, number>;
  events: ColumnType<string, number | undefined, number>;
  visits: ColumnType<string, number | undefined, number>;
  bounces: ColumnType<string, number | undefined, number>;
  duration_s: ColumnType<string, number | undefined, number>;
}
export interface AnalyticsHourlyTable extends AnalyticsRollupColumns { hour: Ts }
export interface AnalyticsDailyTable extends AnalyticsRollupColumns { day: ColumnType<string, string, string> }
/** The daily rows summed per UTC month; `month` is its first day (migration 0026). */
export interface AnalyticsMonthlyTable extends AnalyticsRollupColumns { month: ColumnType<string, string, string> }

/** Every table Vigil's code reads or writes, by name. */
/** Accepted heartbeat pings not yet applied (the ingestion buffer, src/ingest/pings.ts). */
export interface HeartbeatPingsTable {
  seq: ColumnType<number, never, never>;
  monitor_id: string;
  kind: string;
  at: Ts;
}
/** Ping token hash -> monitor, kept by triggers on monitors (migration 0018). */
export interface HeartbeatTokensTable { hash: Buffer; monitor_id: string }
/** Items a background loop set aside after they failed alone (migration 0027). */
export interface IngestRejectedTable {
  id: ColumnType<number, never, never>;
  source: string;
  item: ColumnType<unknown, string, string>;
  error: string;
  rejected_at: ColumnType<Date, Date | undefined, Date>;
}
/** Items each ingestion buffer's drain has taken, a running total. */
export interface IngestDrainedTable { buffer: string; items: ColumnType<number, number | undefined, number> }

/** Server agents (migration 0023, docs/agents.md). */
export interface AgentsTable {
  id: string;
  organization_id: string;
  workspace_id: string | null;
  name: string;
  hostname: ColumnType<string | null, string | null | undefined, string | null>;
  os: ColumnType<string | null, string | null | undefined, string | null>;
  version: ColumnType<string | null, string | null | undefined, string | null>;
  /** Seconds between samples, as the agent reports it. */
  interval_seconds: ColumnType<number | null, number | null | undefined, number | null>;
  last_seen_at: TsNull;
  created_at: TsDefault;
}
/** SHA-256 of an agent's token -> the agent. */
export interface AgentTokensTable { hash: Buffer; agent_id: string }
/** The figures of a sample, as columns (agent_report_buffer and agent_samples). */
export interface AgentFigureColumns {
  cpu_percent: number | null;
  memory_percent: number | null;
  memory_used_bytes: number | null;
  memory_total_bytes: number | null;
  swap_percent: number | null;
  swap_used_bytes: number | null;
  swap_total_bytes: number | null;
  disk_percent: number | null;
  /** `[{mount, filesystem, type, sizeBytes, usedBytes, percent}]`. */
  disks: ColumnType<unknown, string | null, string | null>;
  load1: number | null;
  load5: number | null;
  load15: number | null;
  network_rx_bytes: number | null;
  network_tx_bytes: number | null;
  network_rx_bps: number | null;
  network_tx_bps: number | null;
}
export interface AgentReportBufferTable extends AgentFigureColumns {
  seq: ColumnType<number, never, never>;
  agent_id: string;
  received_at: Ts;
  hostname: string | null;
  os: string | null;
  version: string | null;
  interval_seconds: number | null;
  at: Ts;
}
export interface AgentSamplesTable extends AgentFigureColumns {
  agent_id: string;
  at: Ts;
}
export interface AgentRollupHourlyTable {
  agent_id: string;
  hour: Ts;
  samples: number;
  /** `{figure: {sum, count, min, max}}`. */
  figures: ColumnType<Record<string, { sum: number; count: number; min: number; max: number }>, string, string>;
}

export interface Database {
  agents: AgentsTable;
  agent_tokens: AgentTokensTable;
  agent_report_buffer: AgentReportBufferTable;
  agent_samples: AgentSamplesTable;
  agent_rollup_hourly: AgentRollupHourlyTable;
  analytics_sites: AnalyticsSitesTable;
  analytics_site_channels: AnalyticsSiteChannelsTable;
  analytics_salts: AnalyticsSaltsTable;
  analytics_buffer: AnalyticsBufferTable;
  analytics_events: AnalyticsEventsTable;
  analytics_sessions: AnalyticsSessionsTable;
  analytics_seen: AnalyticsSeenTable;
  analytics_hourly: AnalyticsHourlyTable;
  analytics_daily: AnalyticsDailyTable;
  analytics_monthly: AnalyticsMonthlyTable;
  ingest_rejected: IngestRejectedTable;
  plans: PlansTable;
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  monitors: MonitorsTable;
  monitor_schedule: MonitorScheduleTable;
  hosts: HostsTable;
  monitor_hosts: MonitorHostsTable;
  incidents: IncidentsTable;
  notification_channels: NotificationChannelsTable;
  invitations: InvitationsTable;
  sessions: SessionsTable;
  sms_enrolments: SmsEnrolmentsTable;
  error_projects: ErrorProjectsTable;
  error_events: ErrorEventsTable;
  error_issues: ErrorIssuesTable;
  error_issue_hours: ErrorIssueHoursTable;
  error_issue_users: ErrorIssueUsersTable;
  error_issue_events: ErrorIssueEventsTable;
  error_project_channels: ErrorProjectChannelsTable;
  error_releases: ErrorReleasesTable;
  error_sourcemaps: ErrorSourcemapsTable;
  error_symbol_builds: ErrorSymbolBuildsTable;
  error_symbol_files: ErrorSymbolFilesTable;
  subscriptions: SubscriptionsTable;
  receipts: ReceiptsTable;
  billing_events: BillingEventsTable;
  password_resets: PasswordResetsTable;
  status_pages: StatusPagesTable;
  status_page_components: StatusPageComponentsTable;
  status_page_subscribers: StatusPageSubscribersTable;
  audit_log: AuditLogTable;
  check_results: CheckResultsTable;
  rollup_hourly: RollupHourlyTable;
  rollup_daily: RollupDailyTable;
  incident_events: IncidentEventsTable;
  probes: ProbesTable;
  monitor_channels: MonitorChannelsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  maintenance_windows: MaintenanceWindowsTable;
  oncall_schedules: OncallSchedulesTable;
  escalation_policies: EscalationPoliciesTable;
  oncall_overrides: OncallOverridesTable;
  feed_tokens: FeedTokensTable;
  heartbeat_pings: HeartbeatPingsTable;
  heartbeat_tokens: HeartbeatTokensTable;
  ingest_drained: IngestDrainedTable;
}

export type { Ts };
