/**
 * A world for access tests: two organisations (A and B, Business plan), each
 * with a default workspace ws1 and a second one ws2, filled through the API
 * (and the domain helpers where the API cannot: members, probes, incidents,
 * sessions) with records in each workspace and organisation-wide, people of
 * every reach, keys, sessions and secrets.
 *
 * Every record's name carries a marker `org<a|b>-<zone>-` (zone ws1, ws2,
 * org for organisation-wide records, ppl for people, invitations and keys),
 * so a leak is found by searching a body for the marker; every id is kept in
 * a registry saying whose it is. Secrets (tokens, webhook signing keys,
 * credentials in monitor config) are kept with the operations whose answer
 * may carry them.
 */
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Permission, Role } from '../../src/auth/roles';
import { permissionsOf } from '../../src/auth/roles';
import { newId } from '../../src/crypto/ids';
import { hashToken, newToken } from '../../src/crypto/tokens';
import { addMember, createOrganization, setPassword } from '../../src/domain/organizations';
import { createProbe } from '../../src/domain/probes';
import { groupBatch } from '../../src/errors/grouper';
import { ApiClient, type ApiResponse, type TestServer } from './harness';

export type OrgLabel = 'A' | 'B';
/** ws1 and ws2: the workspaces (any workspace other than ws1 counts as ws2); org: organisation-wide; ppl: people, invitations, keys, sessions. */
export type Zone = 'ws1' | 'ws2' | 'org' | 'ppl';
export type Kind =
  | 'organization' | 'workspace' | 'monitor' | 'host' | 'statusPage' | 'component' | 'subscriber' | 'channel' | 'maintenance'
  | 'schedule' | 'override' | 'policy' | 'agent' | 'probe' | 'errorProject' | 'errorIssue' | 'analyticsSite' | 'incident'
  | 'member' | 'invitation' | 'apiKey' | 'session' | 'user' | 'audit';

/** The id prefix of each kind (src/crypto/ids.ts `newId`). */
export const PREFIX: Record<Kind, string> = {
  organization: 'org', workspace: 'ws', monitor: 'mon', host: 'host', statusPage: 'sp', component: 'spc', subscriber: 'sub', channel: 'ch',
  maintenance: 'mw', schedule: 'sch', override: 'ovr', policy: 'esc', agent: 'agt', probe: 'prb', errorProject: 'prj', errorIssue: 'iss',
  analyticsSite: 'site', incident: 'inc', member: 'mem', invitation: 'inv', apiKey: 'key', session: 'ses', user: 'usr', audit: 'aud',
};

/**
 * Kinds whose records belong to a workspace: outside a caller's confinement
 * they "do not exist" (spec, Authentication §3), so their ids and names must
 * not reach a confined caller. Organisation-wide records of the kinds that
 * have them (channels, schedules, agents, escalation policies without
 * monitors) are visible to every caller of the organisation by design
 * (src/domain/channels.ts, oncall.ts, agents.ts); hosts and probes belong to
 * the organisation (src/domain/hosts.ts); people, invitations and keys are
 * listed organisation-wide (docs/roles.md; their confinement is what a
 * confined caller must not see beyond its own workspaces).
 */
export const WORKSPACE_KINDS: ReadonlySet<Kind> = new Set<Kind>([
  'workspace', 'monitor', 'statusPage', 'component', 'subscriber', 'channel', 'maintenance', 'schedule', 'override', 'policy', 'agent',
  'errorProject', 'errorIssue', 'analyticsSite', 'incident', 'audit',
]);

export interface Rec {
  id: string;
  kind: Kind;
  org: OrgLabel;
  zone: Zone;
  /** People, invitations and keys: reaching more than ws1 (unconfined, or confined elsewhere). */
  beyond: boolean;
  alive: boolean;
  info: Record<string, any>;
}

export const marker = (org: OrgLabel, zone: Zone) => `org${org.toLowerCase()}-${zone}-`;
/** A word carrying a marker, as it is found in a body (lower-cased or not). */
export const MARKED_WORD = /org[ab]-(?:ws1|ws2|org|ppl)-[a-z0-9-]*/gi;
/** Anything shaped like an id of this service. */
export const ID_LIKE = /\b[a-z]{2,4}_[0-9a-z]{20}\b/g;

export interface Caller {
  /** owner-key, viewer-key, ws1-key, scoped-key, owner-session, ws1-admin-session (and extras for targeted tests). */
  name: string;
  org: OrgLabel;
  token: string;
  kind: 'key' | 'session';
  role: Role;
  scopes: Permission[];
  /** Confined to ws1 (by the key's or the membership's confinement). */
  confined: boolean;
  userId: string;
  membershipId: string;
  /** The session's own id (never revoked by the run). */
  sessionId?: string;
  api: ApiClient;
}

/** What a caller holds: its role's permissions, narrowed by the key's scopes (Business plan: audit_log:read included). */
export function holds(c: Caller, p: Permission): boolean {
  return permissionsOf(c.role).includes(p) && (c.scopes.length === 0 || c.scopes.includes(p));
}

export interface OrgWorld {
  label: OrgLabel;
  organizationId: string;
  ws1: string;
  ws2: string;
  owner: { userId: string; membershipId: string; email: string; key: string; api: ApiClient };
  callers: Caller[];
  /** Extra callers for targeted tests (ws2-admin-session). */
  extra: Record<string, Caller>;
}

export interface Secret { value: string; what: string; /** Operations whose answers may carry it (besides the one that made it). */ allowedIn: ReadonlySet<string> }

export const PASSWORD = 'a long enough password 123';

function must<T = any>(what: string, res: ApiResponse, status?: number): T {
  if (res.status >= 300 || (status !== undefined && res.status !== status)) throw new Error(`setting up ${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  return res.body?.data as T;
}

/** The world of two organisations. */
export class World {
  readonly recs = new Map<string, Rec>();
  readonly secrets = new Map<string, Secret>();
  orgs!: Record<OrgLabel, OrgWorld>;
  private n = 0;
  /** Webhook targets point here (a loopback receiver). */
  constructor(readonly server: TestServer, readonly hookUrl: string) {}

  next(): number { return ++this.n; }

  add(kind: Kind, org: OrgLabel, zone: Zone, id: string, info: Record<string, any> = {}, beyond = false): Rec {
    const rec: Rec = { id, kind, org, zone, beyond, alive: true, info };
    this.recs.set(id, rec);
    return rec;
  }

  secret(value: string | null | undefined, what: string, allowedIn: string[] = []): void {
    if (!value || value.length < 8) return;
    this.secrets.set(value, { value, what, allowedIn: new Set(allowedIn) });
    // Stored forms of a token (SHA-256), as hex and base64, are secrets too.
    const h = hashToken(value);
    for (const form of [h.toString('hex'), h.toString('base64'), h.toString('base64url')]) this.secrets.set(form, { value: form, what: `${what} (hash)`, allowedIn: new Set() });
  }

  pool(org: OrgLabel, kind: Kind, filter: (r: Rec) => boolean = () => true): Rec[] {
    const out: Rec[] = [];
    for (const r of this.recs.values()) if (r.alive && r.org === org && r.kind === kind && filter(r)) out.push(r);
    return out;
  }

  one(org: OrgLabel, kind: Kind, zone: Zone, filter: (r: Rec) => boolean = () => true): Rec {
    const r = this.pool(org, kind, (x) => x.zone === zone && filter(x))[0];
    if (!r) throw new Error(`no ${kind} of ${org} in ${zone}`);
    return r;
  }

  wsOf(org: OrgLabel, zone: Zone): string | null {
    const o = this.orgs[org];
    return zone === 'ws1' ? o.ws1 : zone === 'ws2' ? o.ws2 : null;
  }

  ownerApi(org: OrgLabel): ApiClient { return this.orgs[org].owner.api; }

  // ---- factories: each makes one record of a kind in a zone, as the organisation's owner ----

  async workspace(org: OrgLabel): Promise<Rec> {
    const name = `${marker(org, 'ws2')}space-${this.next()}`;
    const d = must('workspace', await this.ownerApi(org).post('/workspaces', { name }), 201);
    return this.add('workspace', org, 'ws2', d.id, { name });
  }

  async monitor(org: OrgLabel, zone: 'ws1' | 'ws2', kind: 'http' | 'heartbeat' | 'tcp' = 'http'): Promise<Rec> {
    const mk = marker(org, zone);
    const n = this.next();
    const credential = `${kind}-credential-${newToken('mc').token}`;
    const config = kind === 'http'
      ? { url: `http://127.0.0.1:9/${mk}path-${n}`, headers: { Authorization: `Bearer ${credential}` }, body: `secret-body-${credential}`, method: 'POST' }
      : kind === 'heartbeat' ? { graceSeconds: 600 } : { host: '127.0.0.1', port: 9 };
    const name = `${mk}${kind}-${n}`;
    const d = must('monitor', await this.ownerApi(org).post('/monitors', {
      name, kind, workspaceId: this.wsOf(org, zone), intervalSeconds: 3600, config: JSON.stringify(config), tags: [`${mk}tag`],
    }), 201);
    if (kind === 'http') this.secret(credential, 'a credential in monitor config');
    const rec = this.add('monitor', org, zone, d.id, { name, kind });
    if (kind === 'heartbeat') {
      const url = must<{ url: string | null }>('push url', await this.ownerApi(org).get(`/monitors/${d.id}/push-url`)).url;
      const token = url ? url.split('/ping/')[1]?.split('/')[0] : null;
      this.secret(token, 'a heartbeat token', ['getMonitorPushUrl']);
      rec.info.pingUrl = url;
    }
    return rec;
  }

  async host(org: OrgLabel): Promise<Rec> {
    const name = `${marker(org, 'org')}host-${this.next()}`;
    const d = must('host', await this.ownerApi(org).post('/hosts', { name, notes: `${marker(org, 'org')}notes` }), 201);
    return this.add('host', org, 'org', d.id, { name });
  }

  async statusPage(org: OrgLabel, zone: 'ws1' | 'ws2'): Promise<Rec> {
    const name = `${marker(org, zone)}page-${this.next()}`;
    const d = must('status page', await this.ownerApi(org).post('/status-pages', { name, workspaceId: this.wsOf(org, zone) }), 201);
    must('status page subscribers', await this.ownerApi(org).patch(`/status-pages/${d.id}`, { subscribersEnabled: true, headline: `${marker(org, zone)}headline`, password: null }));
    return this.add('statusPage', org, zone, d.id, { name, slug: d.slug });
  }

  async component(org: OrgLabel, zone: 'ws1' | 'ws2'): Promise<Rec> {
    const page = this.one(org, 'statusPage', zone);
    const monitor = this.one(org, 'monitor', zone);
    const displayName = `${marker(org, zone)}component-${this.next()}`;
    const d = must('component', await this.ownerApi(org).post(`/status-pages/${page.id}/components`, { monitorId: monitor.id, displayName }), 201);
    const id = d.id ?? d.componentId ?? (d.components as { id: string; displayName: string }[] | undefined)?.find((c) => c.displayName === displayName)?.id;
    if (!id) throw new Error(`component id not found in ${JSON.stringify(d)}`);
    return this.add('component', org, zone, id, { pageId: page.id, displayName });
  }

  async subscriber(org: OrgLabel, zone: 'ws1' | 'ws2'): Promise<Rec> {
    const page = this.one(org, 'statusPage', zone);
    const email = `${marker(org, zone)}subscriber-${this.next()}@example.test`;
    const res = await fetch(`${this.server.url}/status/${page.info.slug}/subscribe`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email }).toString(),
    });
    await res.text();
    const row = await this.server.db.selectFrom('status_page_subscribers').select('id').where('page_id', '=', page.id).where('target_key', '=', email.toLowerCase()).executeTakeFirst();
    if (!row) throw new Error(`subscribing ${email}: ${res.status}`);
    return this.add('subscriber', org, zone, row.id, { pageId: page.id, email });
  }

  async channel(org: OrgLabel, zone: 'ws1' | 'ws2' | 'org', kind: 'webhook' | 'email' = 'webhook'): Promise<Rec> {
    const mk = marker(org, zone);
    const n = this.next();
    const name = `${mk}${kind}-channel-${n}`;
    const target = kind === 'webhook' ? `${this.hookUrl}/${mk}hook-${n}` : `${mk}mail-${n}@example.test`;
    const d = must('channel', await this.ownerApi(org).post('/channels', { kind, name, target, workspaceId: this.wsOf(org, zone) }), 201);
    this.secret(d.secret, 'a webhook signing secret');
    return this.add('channel', org, zone, d.id, { name, kind });
  }

  async maintenance(org: OrgLabel, zone: 'ws1' | 'ws2'): Promise<Rec> {
    const title = `${marker(org, zone)}maintenance-${this.next()}`;
    const d = must('maintenance', await this.ownerApi(org).post('/maintenance', {
      title, description: `${marker(org, zone)}window`, workspaceId: this.wsOf(org, zone), monitorIds: [this.one(org, 'monitor', zone).id],
      startsAt: new Date(Date.now() + 86_400_000).toISOString(), endsAt: new Date(Date.now() + 90_000_000).toISOString(),
    }), 201);
    return this.add('maintenance', org, zone, d.id, { title });
  }

  async schedule(org: OrgLabel, zone: 'ws1' | 'ws2' | 'org'): Promise<Rec> {
    const name = `${marker(org, zone)}schedule-${this.next()}`;
    const d = must('schedule', await this.ownerApi(org).post('/on-call/schedules', {
      name, shiftLengthHours: 24, handoffTime: '09:00', participantIds: [this.orgs[org].owner.userId], workspaceId: this.wsOf(org, zone),
    }), 201);
    return this.add('schedule', org, zone, d.id, { name });
  }

  async override(org: OrgLabel, zone: 'ws1' | 'ws2' | 'org'): Promise<Rec> {
    const schedule = this.one(org, 'schedule', zone);
    const start = Date.now() + 3_600_000 * (1 + this.next());
    const d = must('override', await this.ownerApi(org).post('/on-call/overrides', {
      scheduleId: schedule.id, userId: this.orgs[org].owner.userId, startsAt: new Date(start).toISOString(), endsAt: new Date(start + 1_800_000).toISOString(),
    }), 201);
    return this.add('override', org, zone, d.id, { scheduleId: schedule.id });
  }

  /** An escalation policy: of a workspace (its monitors and step targets there) or organisation-wide (no monitors). */
  async policy(org: OrgLabel, zone: 'ws1' | 'ws2' | 'org', opts: { stepChannelZone?: 'ws1' | 'ws2' | 'org'; name?: string } = {}): Promise<Rec> {
    const name = opts.name ?? `${marker(org, zone)}policy-${this.next()}`;
    const monitorIds = zone === 'org' ? [] : [(await this.monitor(org, zone)).id];
    const d = must('escalation policy', await this.ownerApi(org).post('/on-call/escalation-policies', {
      name, monitorIds, steps: [
        { afterMinutes: 0, targetType: 'schedule', targetId: this.one(org, 'schedule', zone).id },
        { afterMinutes: 5, targetType: 'channel', targetId: this.one(org, 'channel', opts.stepChannelZone ?? zone).id },
      ],
    }), 201);
    return this.add('policy', org, zone, d.id, { name, monitorIds });
  }

  async agent(org: OrgLabel, zone: 'ws1' | 'ws2' | 'org'): Promise<Rec> {
    const name = `${marker(org, zone)}agent-${this.next()}`;
    const d = must('agent', await this.ownerApi(org).post('/agents', { name, workspaceId: this.wsOf(org, zone) }), 201);
    this.secret(d.token, 'an agent token');
    return this.add('agent', org, zone, d.id, { name });
  }

  async probe(org: OrgLabel): Promise<Rec> {
    const name = `${marker(org, 'org')}probe-${this.next()}`;
    const { probeId, token } = await createProbe(this.server.db, this.orgs[org].organizationId, name);
    this.secret(token, 'a probe token');
    return this.add('probe', org, 'org', probeId, { name });
  }

  async errorProject(org: OrgLabel, zone: 'ws1' | 'ws2'): Promise<Rec> {
    const name = `${marker(org, zone)}project-${this.next()}`;
    const d = must('error project', await this.ownerApi(org).post('/errors/projects', { name, workspaceId: this.wsOf(org, zone) }), 201);
    return this.add('errorProject', org, zone, d.id, { name, ref: Number(d.ref), publicKey: d.publicKey });
  }

  /** An issue from a real Sentry envelope, grouped at once. */
  async errorIssue(org: OrgLabel, zone: 'ws1' | 'ws2'): Promise<Rec> {
    const project = this.one(org, 'errorProject', zone);
    const mk = marker(org, zone);
    const n = this.next();
    const event = {
      event_id: randomBytes(16).toString('hex'), platform: 'node', level: 'error', release: `${mk}release-${n}`,
      exception: { values: [{ type: `${mk}Error${n}`, value: `${mk}boom-${n}`, stacktrace: { frames: [{ filename: `/app/${mk}file.js`, function: `${mk}fn`, lineno: 1, colno: 1, in_app: true }] } }] },
    };
    const body = ['{}', '{"type":"event"}', JSON.stringify(event)].join('\n');
    const res = await fetch(`${this.server.url}/api/${project.info.ref}/envelope/?sentry_key=${project.info.publicKey}`, { method: 'POST', body });
    await res.text();
    if (res.status !== 200) throw new Error(`envelope: ${res.status}`);
    for (let i = 0; i < 50; i++) {
      await groupBatch(this.server.db);
      const row = await this.server.db.selectFrom('error_issues').select('id').where('project_id', '=', project.id).where('type', '=', event.exception.values[0].type).executeTakeFirst();
      if (row) return this.add('errorIssue', org, zone, row.id, { projectId: project.id });
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the envelope was never grouped');
  }

  async analyticsSite(org: OrgLabel, zone: 'ws1' | 'ws2'): Promise<Rec> {
    const n = this.next();
    const domain = `${marker(org, zone)}site-${n}.example.test`;
    const d = must('analytics site', await this.ownerApi(org).post('/analytics', { domain, workspaceId: this.wsOf(org, zone), name: `${marker(org, zone)}site-${n}` }), 201);
    return this.add('analyticsSite', org, zone, d.id, { domain });
  }

  /** An incident of a monitor of the zone (inserted as the engine would), with a comment on its timeline. */
  async incident(org: OrgLabel, zone: 'ws1' | 'ws2', status: 'open' | 'resolved' = 'open'): Promise<Rec> {
    const monitor = this.one(org, 'monitor', zone);
    const id = newId('inc');
    const title = `${marker(org, zone)}incident-${this.next()}`;
    await this.server.db.insertInto('incidents').values({
      id, organization_id: this.orgs[org].organizationId, workspace_id: this.wsOf(org, zone)!, monitor_id: monitor.id, title,
      cause: 'timeout', severity: 'critical', status, started_at: new Date(Date.now() - 600_000), ...(status === 'resolved' ? { resolved_at: new Date() } : {}),
    }).execute();
    const api = this.ownerApi(org);
    if (status === 'open') must('incident comment', await api.patch(`/incidents/${id}`, { comment: `${marker(org, zone)}comment on ${title}` }));
    else must('postmortem', await api.put(`/incidents/${id}/postmortem`, { body: `${marker(org, zone)}postmortem of ${title}` }));
    return this.add('incident', org, zone, id, { title, status });
  }

  /** A person of the organisation (a membership, by the domain helper), with the key the helper mints. */
  async member(org: OrgLabel, role: Role, confinement: 'none' | 'ws1' | 'ws2', password = false): Promise<Rec> {
    const o = this.orgs[org];
    const email = `${marker(org, 'ppl')}${role}-${confinement}-${this.next()}@example.test`;
    const ws = confinement === 'none' ? undefined : [confinement === 'ws1' ? o.ws1 : o.ws2];
    const m = await addMember(this.server.db, { organizationId: o.organizationId, email, role, workspaceIds: ws });
    if (password) await setPassword(this.server.db, email, PASSWORD);
    this.secret(m.apiKey, 'an API key token');
    this.add('user', org, 'ppl', m.userId, { email });
    const keyRow = await this.server.db.selectFrom('api_keys').select('id').where('membership_id', '=', m.membershipId).executeTakeFirstOrThrow();
    this.add('apiKey', org, 'ppl', keyRow.id, { membershipId: m.membershipId, confinement }, confinement !== 'ws1');
    return this.add('member', org, 'ppl', m.membershipId, { userId: m.userId, email, role, confinement, apiKey: m.apiKey }, confinement !== 'ws1');
  }

  async invitation(org: OrgLabel, confinement: 'none' | 'ws1' | 'ws2', role: Role = 'member'): Promise<Rec> {
    const o = this.orgs[org];
    const email = `${marker(org, 'ppl')}invited-${confinement}-${this.next()}@example.test`;
    const workspaceIds = confinement === 'none' ? [] : [confinement === 'ws1' ? o.ws1 : o.ws2];
    const d = must('invitation', await o.owner.api.post('/members', { email, role, workspaceIds }), 201);
    return this.add('invitation', org, 'ppl', d.id, { email, confinement }, confinement !== 'ws1');
  }

  /** A key minted by the owner, confined as asked. */
  async apiKey(org: OrgLabel, confinement: 'none' | 'ws1' | 'ws2', scopes: Permission[] = []): Promise<Rec & { token: string }> {
    const o = this.orgs[org];
    const name = `${marker(org, 'ppl')}key-${confinement}-${this.next()}`;
    const workspaceIds = confinement === 'none' ? [] : [confinement === 'ws1' ? o.ws1 : o.ws2];
    const d = must('api key', await o.owner.api.post('/api-keys', { name, scopes, workspaceIds }), 201);
    this.secret(d.token, 'an API key token');
    const rec = this.add('apiKey', org, 'ppl', d.id, { name, membershipId: o.owner.membershipId, confinement }, confinement !== 'ws1');
    return Object.assign(rec, { token: d.token as string });
  }

  /** A sign-in session of a person, inserted as POST /sessions would (sign-in failures are throttled; a pool of sessions is not). */
  async session(org: OrgLabel, userId: string): Promise<Rec & { token: string }> {
    const { token } = newToken('vs');
    const id = newId('ses');
    const now = new Date();
    await this.server.db.insertInto('sessions').values({
      id, token_hash: hashToken(token), user_id: userId, organization_id: this.orgs[org].organizationId,
      created_at: now, last_seen_at: now, expires_at: new Date(now.getTime() + 86_400_000), user_agent: 'access-world', ip_address: '127.0.0.1',
    }).execute();
    this.secret(token, 'a session token');
    return Object.assign(this.add('session', org, 'ppl', id, { userId }), { token });
  }

  /** Signs a person in through POST /sessions. */
  async signIn(email: string): Promise<{ token: string; sessionId: string }> {
    const res = await fetch(`${this.server.url}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
    const body = await res.json() as any;
    if (res.status !== 201) throw new Error(`signing in ${email}: ${res.status} ${JSON.stringify(body)}`);
    this.secret(body.data.token, 'a session token', ['signIn']);
    return { token: body.data.token, sessionId: body.data.session.id };
  }

  // ---- the world ----

  private async organisation(label: OrgLabel): Promise<void> {
    const email = `${marker(label, 'ppl')}owner@example.test`;
    const o = await createOrganization(this.server.db, { name: `${marker(label, 'org')}Organisation`, ownerEmail: email, plan: 'business' });
    const api = this.server.api(o.apiKey);
    this.secret(o.apiKey, 'an API key token');
    await setPassword(this.server.db, email, PASSWORD);
    const user = await this.server.db.selectFrom('users').select('password_hash').where('id', '=', o.userId).executeTakeFirstOrThrow();
    this.secret(user.password_hash, 'a password hash');
    must('rename ws1', await api.patch(`/workspaces/${o.workspaceId}`, { name: `${marker(label, 'ws1')}Default` }));
    const ws2 = must('ws2', await api.post('/workspaces', { name: `${marker(label, 'ws2')}Second` }), 201);
    this.orgs[label] = {
      label, organizationId: o.organizationId, ws1: o.workspaceId, ws2: ws2.id,
      owner: { userId: o.userId, membershipId: o.membershipId, email, key: o.apiKey, api }, callers: [], extra: {},
    };
    this.add('organization', label, 'org', o.organizationId);
    this.add('workspace', label, 'ws1', o.workspaceId, { default: true });
    this.add('workspace', label, 'ws2', ws2.id, { protected: true });
    this.add('user', label, 'ppl', o.userId, { email });
    this.add('member', label, 'ppl', o.membershipId, { userId: o.userId, email, role: 'owner', confinement: 'none', protected: true }, true);
    const ownerKey = await this.server.db.selectFrom('api_keys').select('id').where('membership_id', '=', o.membershipId).executeTakeFirstOrThrow();
    this.add('apiKey', label, 'ppl', ownerKey.id, { membershipId: o.membershipId, confinement: 'none', protected: true }, true);
  }

  private async records(org: OrgLabel): Promise<void> {
    for (const zone of ['ws1', 'ws2'] as const) {
      await this.monitor(org, zone, 'http');
      await this.monitor(org, zone, 'heartbeat');
      await this.monitor(org, zone, 'tcp');
      await this.statusPage(org, zone);
      await this.component(org, zone);
      await this.subscriber(org, zone);
      await this.channel(org, zone, 'webhook');
      await this.channel(org, zone, 'email');
      await this.maintenance(org, zone);
      await this.schedule(org, zone);
      await this.override(org, zone);
      await this.agent(org, zone);
      await this.errorProject(org, zone);
      await this.errorIssue(org, zone);
      await this.analyticsSite(org, zone);
      await this.incident(org, zone, 'open');
      await this.incident(org, zone, 'resolved');
    }
    await this.channel(org, 'org', 'webhook');
    await this.channel(org, 'org', 'email');
    await this.schedule(org, 'org');
    await this.override(org, 'org');
    await this.agent(org, 'org');
    await this.probe(org);
    for (const zone of ['ws1', 'ws2', 'org'] as const) await this.policy(org, zone);
    const api = this.ownerApi(org);
    // Hosts belong to the organisation; each runs a monitor of each workspace.
    for (let i = 0; i < 2; i++) {
      const host = await this.host(org);
      for (const zone of ['ws1', 'ws2'] as const) {
        const m = this.one(org, 'monitor', zone, (r) => r.info.kind === 'http');
        const current = must<{ id: string }[]>('monitor hosts', await api.get(`/monitors/${m.id}/hosts`)).map((h) => h.id);
        must('link host', await api.put(`/monitors/${m.id}/hosts`, { hostIds: [...current, host.id] }));
      }
    }
    // Each http monitor alerts its workspace's channel and an organisation-wide one.
    for (const zone of ['ws1', 'ws2'] as const) {
      const m = this.one(org, 'monitor', zone, (r) => r.info.kind === 'http');
      must('monitor channels', await api.put(`/monitors/${m.id}/channels`, { channelIds: [this.one(org, 'channel', zone).id, this.one(org, 'channel', 'org').id] }));
    }
    // The incident feed's token.
    const feed = must('incident feed', await api.post('/incident-feed'));
    for (const u of Object.values(feed ?? {})) if (typeof u === 'string' && u.includes('/feeds/incidents/')) this.secret(u.split('/feeds/incidents/')[1].split('/')[0], 'an incident feed token');
  }

  private async people(org: OrgLabel): Promise<void> {
    const o = this.orgs[org];
    // Callers.
    const viewer = await this.member(org, 'viewer', 'none');
    const ws1Key = await this.apiKey(org, 'ws1');
    const scoped = await this.apiKey(org, 'none', ['monitor:read']);
    // The owner signs in through POST /sessions; the confined admins' sessions are inserted as sign-in makes them
    // (each password hash costs a second of CPU on a small machine).
    const ownerSession = await this.signIn(o.owner.email);
    const ws1Admin = await this.member(org, 'admin', 'ws1');
    const ws1AdminSession = await this.session(org, ws1Admin.info.userId);
    const ws2Admin = await this.member(org, 'admin', 'ws2');
    const ws2AdminSession = await this.session(org, ws2Admin.info.userId);
    for (const s of [ws1AdminSession, ws2AdminSession]) s.info.protected = true;
    const base = { org, userId: o.owner.userId, membershipId: o.owner.membershipId };
    const caller = (c: Omit<Caller, 'api'>): Caller => ({ ...c, api: this.server.api(c.token) });
    o.callers.push(
      caller({ ...base, name: 'owner-key', token: o.owner.key, kind: 'key', role: 'owner', scopes: [], confined: false }),
      caller({ ...base, name: 'viewer-key', token: viewer.info.apiKey, kind: 'key', role: 'viewer', scopes: [], confined: false, userId: viewer.info.userId, membershipId: viewer.id }),
      caller({ ...base, name: 'ws1-key', token: ws1Key.token, kind: 'key', role: 'owner', scopes: [], confined: true }),
      caller({ ...base, name: 'scoped-key', token: scoped.token, kind: 'key', role: 'owner', scopes: ['monitor:read'], confined: false }),
      caller({ ...base, name: 'owner-session', token: ownerSession.token, kind: 'session', role: 'owner', scopes: [], confined: false, sessionId: ownerSession.sessionId }),
      caller({ ...base, name: 'ws1-admin-session', token: ws1AdminSession.token, kind: 'session', role: 'admin', scopes: [], confined: true, userId: ws1Admin.info.userId, membershipId: ws1Admin.id, sessionId: ws1AdminSession.id }),
    );
    o.extra['ws2-admin-session'] = caller({ ...base, name: 'ws2-admin-session', token: ws2AdminSession.token, kind: 'session', role: 'admin', scopes: [], confined: true, userId: ws2Admin.info.userId, membershipId: ws2Admin.id, sessionId: ws2AdminSession.id });
    // Callers are never the target of a write of the run.
    for (const id of [viewer.id, ws1Admin.id, ws2Admin.id, ws1Key.id, scoped.id]) this.recs.get(id)!.info.protected = true;
    for (const r of this.pool(org, 'apiKey', (k) => k.info.membershipId === viewer.id || k.info.membershipId === ws1Admin.id || k.info.membershipId === ws2Admin.id)) r.info.protected = true;
    // People of every reach, invitations, keys and sessions.
    for (const [role, conf] of [['admin', 'none'], ['member', 'none'], ['member', 'ws1'], ['member', 'ws2'], ['viewer', 'ws1']] as const) await this.member(org, role, conf);
    for (const conf of ['none', 'ws1', 'ws2'] as const) await this.invitation(org, conf);
    for (const conf of ['none', 'ws1', 'ws2'] as const) await this.apiKey(org, conf);
    for (const c of o.callers.filter((x) => x.kind === 'session')) for (let i = 0; i < 2; i++) await this.session(org, c.userId);
  }

  /** Audit entries so far, by the workspace they concern (organisation-wide ones as org). */
  private async auditEntries(org: OrgLabel): Promise<void> {
    const o = this.orgs[org];
    const entries = must<{ id: string; workspaceId: string | null }[]>('audit', await o.owner.api.get('/audit?limit=200'));
    for (const e of entries) this.add('audit', org, e.workspaceId === null ? 'org' : e.workspaceId === o.ws1 ? 'ws1' : 'ws2', e.id);
  }

  /** Builds both organisations. */
  async build(): Promise<this> {
    this.orgs = {} as Record<OrgLabel, OrgWorld>;
    await Promise.all((['A', 'B'] as const).map((label) => this.organisation(label)));
    await Promise.all((['A', 'B'] as const).map(async (label) => {
      await this.records(label);
      await this.people(label);
      await this.auditEntries(label);
    }));
    return this;
  }

  /** The callers of both organisations. */
  callers(): Caller[] {
    return [...this.orgs.A.callers, ...this.orgs.B.callers];
  }
}

/** A gzipped ProGuard mapping of one class, for raw symbol uploads. */
export const TINY_GZIP = gzipSync(Buffer.from('com.example.app.MainActivity -> a:\n    void onCreate() -> a\n'));
