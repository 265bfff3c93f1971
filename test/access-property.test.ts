/**
 * The random-operation access property test (issue 24): a bounded, seeded run
 * of a few thousand operations — every operation of openapi.yaml, by all six
 * kinds of caller of two organisations, over REST, Connect (JSON and binary)
 * and MCP — naming ids of the caller's own reach, of another workspace of its
 * organisation (when it is confined to ws1), of the other organisation, and
 * made up. On every answer:
 *
 *  P1 no 5xx;
 *  P2 no 2xx for a request naming a foreign or out-of-confinement id (the one
 *     exception the spec makes: foreign hostIds of PUT /monitors/{id}/hosts are
 *     dropped, so they must not be in the answer);
 *  P3 no foreign id or name, nor (confined caller) an id or name of another
 *     workspace, anywhere in a body: JSON, Connect messages as JSON, MCP
 *     results, export files unzipped;
 *  P4 no secret in any body (tokens, webhook secrets, heartbeat tokens outside
 *     push-url, credentials of monitor config, their hashes);
 *  P5 the same answer (status, code, error, vars) for an outside id as for a
 *     made-up id of the same prefix;
 *  P6 a write by a key lacking the permission never lands: 403 naming it.
 *  P7 every 403 names the permission in `vars.permission` (spec,
 *     Authentication §7) — besides session_required.
 *
 * Every violation is collected; the run fails once with a de-duplicated
 * summary. PROPERTY_SEED and PROPERTY_OPS choose the run (the seed is printed
 * on failure); PROPERTY_REPORT names a file for the whole list as JSON.
 * The specific reproductions of the issue follow as tests of their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { routes, type RouteDef } from '../gen/routes';
import type { Permission, Role } from '../src/auth/roles';
import { holds, ID_LIKE, MARKED_WORD, marker, PREFIX, TINY_GZIP, World, WORKSPACE_KINDS, type Caller, type Kind, type OrgLabel, type Rec, type Zone } from './support/access-world';
import { startTestServer, type TestServer } from './support/harness';
import { connectAgent } from './support/mcp';
import { Rng } from './support/prng';
import { startHttpReceiver, startSmtpServer, type HttpReceiver, type SmtpReceiver } from './support/receivers';
import { schemaTools, type SchemaTools, type Spec } from './support/schema';
import { connectCall, connectStreamCall, mcpCall, restCall, type Transport, type WireAnswer, type WireRequest } from './support/wire-call';

const SEED = Number(process.env.PROPERTY_SEED ?? 24_0624);
/** Operations that hash a password, sent at most this often in a run. */
const SLOW_OPS: Record<string, number> = { signIn: 4, changePassword: 4, signUp: 3, resetPassword: 3, requestPasswordReset: 4 };
const OPS = Number(process.env.PROPERTY_OPS ?? 2000);

let server: TestServer;
let smtp: SmtpReceiver;
let hooks: HttpReceiver;
let world: World;
let schema: SchemaTools;
const agents = new Map<string, Client>();
let toolNames = new Set<string>();

beforeAll(async () => {
  smtp = await startSmtpServer();
  hooks = await startHttpReceiver();
  const high = '100000000';
  server = await startTestServer({
    SMTP_URL: smtp.url, RATE_LIMIT_READ: high, RATE_LIMIT_WRITE: high, RATE_LIMIT_EXPORT: high, RATE_LIMIT_SOURCEMAPS: high, RATE_LIMIT_SYMBOLS: high,
  });
  const t0 = Date.now();
  world = await new World(server, hooks.url).build();
  console.log(`access property world: ${world.recs.size} records in ${Math.round((Date.now() - t0) / 1000)} s`);
  for (const c of [...world.callers(), ...Object.values(world.orgs.A.extra), ...Object.values(world.orgs.B.extra)]) agents.set(c.token, await connectAgent(server.url, c.token));
  toolNames = new Set((await agents.get(world.orgs.A.owner.key)!.listTools()).tools.map((t) => t.name));
  schema = schemaTools(parse(fs.readFileSync(path.join(__dirname, '..', 'openapi.yaml'), 'utf8')) as Spec);
}, 180_000);

afterAll(async () => {
  for (const c of agents.values()) await c.close().catch(() => undefined);
  await server?.close();
  await smtp?.close();
  await hooks?.close();
});

// ---------------------------------------------------------------------------------------------------------------
// What a request names, and how it is chosen.

/** own: within the caller's reach; ooc: another workspace of its organisation (confined caller); beyond: a person,
 * invitation or key of its organisation reaching further than the caller (visible, not writable); foreign: the other
 * organisation's; madeup: an id of the right prefix that exists nowhere. */
type Category = 'own' | 'ooc' | 'beyond' | 'foreign' | 'madeup';
interface Named { kind: Kind; id: string; cat: Category; where: string }

const PATH_KIND: [RegExp, Kind][] = [
  [/^\/monitors\/\{id\}/, 'monitor'], [/^\/hosts\/\{id\}/, 'host'], [/^\/status-pages\/\{id\}/, 'statusPage'], [/^\/channels\/\{id\}/, 'channel'],
  [/^\/analytics\/\{id\}/, 'analyticsSite'], [/^\/errors\/projects\/\{id\}/, 'errorProject'], [/^\/errors\/issues\/\{id\}/, 'errorIssue'],
  [/^\/agents\/\{id\}/, 'agent'], [/^\/incidents\/\{id\}/, 'incident'], [/^\/workspaces\/\{id\}/, 'workspace'], [/^\/members\/\{id\}/, 'member'],
  [/^\/invitations\/\{id\}/, 'invitation'], [/^\/sessions\/\{id\}/, 'session'], [/^\/on-call\/schedules\/\{id\}/, 'schedule'],
  [/^\/on-call\/overrides\/\{id\}/, 'override'], [/^\/on-call\/escalation-policies\/\{id\}/, 'policy'], [/^\/probes\/\{id\}/, 'probe'],
  [/^\/maintenance\/\{id\}/, 'maintenance'],
];

/** Operations whose outside-or-made-up id is a query parameter (P5 compares on it), and the kind it names. */
const QUERY_PRIMARY: Record<string, { name: string; kind: Kind; optional?: boolean }> = {
  revokeApiKey: { name: 'id', kind: 'apiKey' }, deleteAgent: { name: 'id', kind: 'agent' }, deleteMaintenanceWindow: { name: 'id', kind: 'maintenance' },
  removeStatusPageComponent: { name: 'component', kind: 'component' }, removeStatusPageSubscriber: { name: 'subscriber', kind: 'subscriber' },
  removeHostMonitor: { name: 'monitorId', kind: 'monitor' }, listErrorIssues: { name: 'project', kind: 'errorProject', optional: true },
  listAuditEntries: { name: 'before', kind: 'audit', optional: true },
};

/** Operations that end their target: it is made fresh for each request (by its organisation's owner) and cleaned up after. */
const EPHEMERAL = new Set([
  'deleteMonitor', 'deleteHost', 'deleteStatusPage', 'removeStatusPageComponent', 'removeStatusPageSubscriber', 'deleteChannel', 'deleteMaintenanceWindow',
  'deleteSchedule', 'deleteOverride', 'deleteEscalationPolicy', 'deleteAgent', 'deleteErrorProject', 'deleteAnalyticsSite', 'deleteWorkspace',
  'removeMember', 'updateMember', 'deleteInvitation', 'revokeApiKey', 'revokeSession', 'revokeProbe',
]);

const PEOPLE: ReadonlySet<Kind> = new Set<Kind>(['member', 'invitation', 'apiKey']);
/** Kinds that have organisation-wide records besides workspace ones. */
const ORG_WIDE: ReadonlySet<Kind> = new Set<Kind>(['channel', 'schedule', 'override', 'policy', 'agent']);
const ORG_ONLY: ReadonlySet<Kind> = new Set<Kind>(['host', 'probe', 'organization']);

const other = (o: OrgLabel): OrgLabel => (o === 'A' ? 'B' : 'A');

/** True when the record must not exist for the caller (another organisation's, or another workspace's for a confined caller). */
function hiddenFrom(c: Caller, r: Rec): boolean {
  if (r.org !== c.org) return true;
  // Audit entries of the whole organisation are not listed to a confined caller either (src/domain/auditLog.ts).
  if (r.kind === 'audit') return c.confined && r.zone !== 'ws1';
  return c.confined && WORKSPACE_KINDS.has(r.kind) && r.zone === 'ws2';
}

/** The choices of one request: its caller, what it names, the names it gives. */
class Gen {
  readonly named: Named[] = [];
  /** Records made for this request, cleaned up after it. */
  readonly made: Rec[] = [];
  target?: Rec;
  constructor(readonly rng: Rng, readonly caller: Caller, readonly route: RouteDef) {}

  get org(): OrgLabel { return this.caller.org; }
  get write(): boolean { return this.route.method !== 'GET'; }

  /** A workspace zone within the caller's reach. */
  zone(): 'ws1' | 'ws2' { return this.caller.confined ? 'ws1' : this.rng.pick(['ws1', 'ws2'] as const); }

  madeUp(kind: Kind): string { return `${PREFIX[kind]}_${this.rng.base32(20)}`; }

  /** Which kind of id: mostly the caller's own for body fields, a wide mix for the id a path names. */
  category(kind: Kind, primary: boolean): Category {
    const confined = this.caller.confined;
    const hasOoc = (confined && (WORKSPACE_KINDS.has(kind) || (PEOPLE.has(kind) && this.write))) || kind === 'session';
    const w = primary
      ? { own: hasOoc ? 30 : 45, ooc: hasOoc ? 35 : 0, foreign: 25, madeup: 15 }
      : { own: 82, ooc: hasOoc ? 7 : 0, foreign: 7, madeup: 4 };
    const cat = this.rng.weighted(w);
    // A person, invitation or key reaching further is visible but not writable; another person's session (sessions
    // are personal) is outside every caller's reach.
    return cat === 'ooc' && PEOPLE.has(kind) ? 'beyond' : cat;
  }

  /** Records of `kind` in the category's reach (never one the run must keep: callers, their keys and sessions, ws1/ws2 for a delete). */
  candidates(kind: Kind, cat: Category, zone?: Zone, primary = false): Rec[] {
    const c = this.caller;
    const usable = (r: Rec) => !(primary && this.write && r.info.protected) && r.id !== c.sessionId;
    if (cat === 'foreign') return world.pool(other(c.org), kind, (r) => usable(r) && (zone === undefined || r.zone === zone || ORG_ONLY.has(kind) || PEOPLE.has(kind)));
    if (kind === 'session') {
      return world.pool(c.org, 'session', (r) => usable(r) && (cat === 'own' ? r.info.userId === c.userId : r.info.userId !== c.userId));
    }
    if (PEOPLE.has(kind) || kind === 'user') {
      return world.pool(c.org, kind, (r) => usable(r) && (cat === 'beyond' ? r.beyond : !(c.confined && this.write && r.beyond)));
    }
    if (cat === 'ooc') return world.pool(c.org, kind, (r) => usable(r) && hiddenFrom(c, r));
    return world.pool(c.org, kind, (r) => usable(r) && !hiddenFrom(c, r) && (zone === undefined || r.zone === zone));
  }

  /** Records `kind`'s id in `where`, chosen in `cat` (or by the mix), preferring zone `zone` for the caller's own. */
  pick(kind: Kind, where: string, opts: { zone?: Zone; cat?: Category; primary?: boolean } = {}): string {
    const cat = opts.cat ?? this.category(kind, opts.primary ?? false);
    let id: string | undefined;
    let actual = cat;
    if (cat !== 'madeup') {
      let pool = this.candidates(kind, cat, cat === 'own' ? opts.zone : undefined, opts.primary);
      if (!pool.length && cat === 'own') pool = this.candidates(kind, cat, undefined, opts.primary);
      id = pool.length ? this.rng.pick(pool).id : undefined;
    }
    if (id === undefined) { id = this.madeUp(kind); actual = 'madeup'; }
    this.named.push({ kind, id, cat: actual, where });
    return id;
  }

  /** The zone and organisation of a workspace id (for the marker of what is made in it). */
  zoneOfWorkspace(id: string | null | undefined): { org: OrgLabel; zone: Zone } {
    if (id === null) return { org: this.org, zone: 'org' };
    const r = id ? world.recs.get(id) : undefined;
    return r ? { org: r.org, zone: r.zone } : { org: this.org, zone: 'ws1' };
  }

  /** A name carrying the marker of where the record lives. */
  name(what: string, where: { org: OrgLabel; zone: Zone } = this.target ? { org: this.target.org, zone: this.target.zone } : { org: this.org, zone: 'ws1' }): string {
    return `${marker(where.org, where.zone)}${what}-${world.next()}`;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Fresh targets for the operations that end them.

async function ephemeral(kind: Kind, org: OrgLabel, cat: Category, g: Gen): Promise<Rec | null> {
  const zone: 'ws1' | 'ws2' = cat === 'ooc' ? 'ws2' : cat === 'foreign' ? g.rng.pick(['ws1', 'ws2'] as const) : g.zone();
  const orgWide = cat !== 'ooc' && ORG_WIDE.has(kind) && g.rng.chance(0.25);
  const z = orgWide ? 'org' as const : zone;
  // A confined caller's own workspace is its default one, which no run deletes: it names a made-up one instead.
  if (kind === 'workspace' && cat === 'own' && g.caller.confined) return null;
  const conf = (): 'none' | 'ws1' | 'ws2' => (cat === 'beyond' ? g.rng.pick(['none', 'ws2'] as const) : cat === 'own' && g.caller.confined ? 'ws1' : g.rng.pick(['none', 'ws1', 'ws2'] as const));
  try {
    switch (kind) {
      case 'monitor': return await world.monitor(org, zone, g.rng.pick(['http', 'heartbeat', 'tcp'] as const));
      case 'host': return await world.host(org);
      case 'probe': return await world.probe(org);
      case 'statusPage': return await world.statusPage(org, zone);
      case 'component': return await world.component(org, zone);
      case 'subscriber': return await world.subscriber(org, zone);
      case 'channel': return await world.channel(org, z, g.rng.pick(['webhook', 'email'] as const));
      case 'maintenance': return await world.maintenance(org, zone);
      case 'schedule': return await world.schedule(org, z);
      case 'override': return await world.override(org, z);
      case 'policy': return await world.policy(org, z);
      case 'agent': return await world.agent(org, z);
      case 'errorProject': return await world.errorProject(org, zone);
      case 'analyticsSite': return await world.analyticsSite(org, zone);
      case 'workspace': return await world.workspace(org);
      case 'member': return await world.member(org, g.rng.pick(['admin', 'member', 'viewer'] as const), conf());
      case 'invitation': return await world.invitation(org, conf(), g.rng.pick(['admin', 'member', 'viewer'] as const));
      case 'apiKey': return await world.apiKey(org, conf());
      case 'session': {
        const users = cat === 'own' ? [g.caller.userId] : world.pool(org, 'user', (u) => u.id !== g.caller.userId).map((u) => u.id);
        return await world.session(org, g.rng.pick(users));
      }
      default: return null;
    }
  } catch {
    return null; // a plan cap, say: the run falls back to a pooled record
  }
}

/** Removes what a request's fresh targets left behind (as their organisation's owner). */
async function cleanup(recs: Rec[]): Promise<void> {
  for (const r of recs.reverse()) {
    const api = world.ownerApi(r.org);
    const paths: Partial<Record<Kind, string>> = {
      monitor: `/monitors/${r.id}`, host: `/hosts/${r.id}`, statusPage: `/status-pages/${r.id}`, channel: `/channels/${r.id}`,
      maintenance: `/maintenance?id=${r.id}`, schedule: `/on-call/schedules/${r.id}`, override: `/on-call/overrides/${r.id}`,
      policy: `/on-call/escalation-policies/${r.id}`, agent: `/agents?id=${r.id}`, errorProject: `/errors/projects/${r.id}`,
      analyticsSite: `/analytics/${r.id}`, workspace: `/workspaces/${r.id}`, member: `/members/${r.id}`, invitation: `/invitations/${r.id}`,
      apiKey: `/api-keys?id=${r.id}`, probe: `/probes/${r.id}`, component: `/status-pages/${r.info.pageId}/components?component=${r.id}`,
      subscriber: `/status-pages/${r.info.pageId}/subscribers?subscriber=${r.id}`,
    };
    if (r.kind === 'session') await server.db.deleteFrom('sessions').where('id', '=', r.id).execute();
    else if (paths[r.kind]) await api.delete(paths[r.kind]!);
    if (r.kind === 'policy') for (const m of r.info.monitorIds ?? []) await api.delete(`/monitors/${m}`);
    r.alive = false;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies and queries, by operation.

const future = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
const EXPORT_ENTITIES = ['monitors', 'hosts', 'status-pages', 'notification-channels', 'members', 'incidents', 'incident-events', 'postmortems', 'audit-log', 'error-issues', 'uptime-daily', 'uptime-hourly', 'analytics-hourly'];

type Built = { query?: Record<string, string | number | boolean>; body?: unknown; raw?: WireRequest['raw'] };

/** The zone a target lives in when it is the caller's, for ids named beside it. */
const zoneOf = (g: Gen): Zone => (g.target && g.target.org === g.org && g.target.zone !== 'ppl' ? g.target.zone : g.zone());

/** Words to search for: mostly the markers of what the caller must not see (the other organisation's, another workspace's). */
function searchWords(g: Gen): string {
  const o = g.org.toLowerCase();
  const b = other(g.org).toLowerCase();
  const hidden = [`org${b}`, `org${b}-ws1`, `org${b}-ws2`, ...(g.caller.confined ? [`org${o}-ws2`, `org${o}-ws2`, `org${o}-ws2`] : [])];
  const plain = [`org${o}`, `org${o}-ws1`, `org${o}-org`, 'ws2', 'incident', 'postmortem', 'policy', 'host', 'http', 'channel', 'project', 'site', 'key', 'invited', 'example.test', 'boom', 'comment'];
  return g.rng.chance(0.6) ? g.rng.pick(hidden) : g.rng.pick(plain);
}

function channelIds(g: Gen, zone: Zone): string[] {
  return g.rng.chance(0.2) ? [] : [g.pick('channel', 'body.channelIds', { zone }), ...(g.rng.chance(0.5) ? [g.pick('channel', 'body.channelIds', { zone: 'org' })] : [])];
}

const BUILD: Record<string, (g: Gen) => Built> = {
  listMonitors: (g) => (g.rng.chance(0.6) ? { query: { tag: `${marker(g.rng.pick(['A', 'B'] as const), g.rng.pick(['ws1', 'ws2'] as const))}tag` } } : {}),
  listMonitorGraphs: (g) => ({ query: { hours: g.rng.pick([1, 24, 168]) } }),
  getMonitorGraph: (g) => ({ query: { hours: g.rng.pick([1, 24]) } }),
  getMonitorHistory: (g) => ({ query: { days: g.rng.pick([1, 7, 30]) } }),
  listIncidents: (g) => ({ query: g.rng.pick<Record<string, string | number | boolean>>([{}, { open: true }, { status: 'resolved' }, { limit: 200 }]) }),
  getAnalyticsSite: (g) => ({ query: { days: 7, ...(g.rng.chance(0.5) ? { dimensions: 'path,referrer,country' } : {}) } }),
  getAgentMetrics: () => ({ query: { hours: 24, limit: 100 } }),
  getAgentHourlyMetrics: () => ({ query: { days: 7 } }),
  listAuditEntries: (g) => ({ query: { limit: g.rng.pick([5, 50, 200]) } }),
  listErrorIssues: (g) => ({ query: { status: 'all', limit: 200, ...(g.rng.chance(0.3) ? { q: searchWords(g) } : {}) } }),
  listMaintenanceWindows: (g): Built => ({ query: g.rng.chance(0.5) ? { past: true } : {} }),
  searchResources: (g) => ({ query: { q: searchWords(g), limit: 20, ...(g.rng.chance(0.2) ? { type: g.rng.pick(['monitor', 'incident,postmortem', 'member,invitation,api_key', 'channel,maintenance', 'workspace']) } : {}) } }),
  exportAll: (g) => ({ query: { format: g.rng.pick(['csv', 'json']) } }),
  exportEntity: (g) => ({ query: { format: g.rng.pick(['csv', 'json']) } }),
  // From the start of the log: the replay holds every change of the run so far that the caller may read (and nothing else).
  streamEvents: (g) => (g.rng.chance(0.8) ? { query: { lastEventId: '0-0' } } : {}),

  createMonitor: (g) => {
    const zone = g.zone();
    const workspaceId = g.pick('workspace', 'body.workspaceId', { zone });
    const kind = g.rng.pick(['http', 'heartbeat', 'tcp']);
    const config = kind === 'http' ? { url: 'http://127.0.0.1:9/' } : kind === 'heartbeat' ? { graceSeconds: 600 } : { host: '127.0.0.1', port: 9 };
    const where = g.zoneOfWorkspace(workspaceId);
    return {
      body: {
        name: g.name('monitor', where), kind, workspaceId, config: JSON.stringify(config), intervalSeconds: 3600,
        tags: [`${marker(where.org, where.zone)}tag`],
        ...(g.rng.chance(0.3) ? { dependsOn: [g.pick('monitor', 'body.dependsOn', { zone })] } : {}),
        ...(g.rng.chance(0.2) ? { probeId: g.pick('probe', 'body.probeId') } : {}),
      },
    };
  },
  updateMonitor: (g) => ({ body: g.rng.pick<Record<string, unknown>>([{ name: g.name('monitor') }, { paused: g.rng.chance(0.5) }, { enabled: true }, { intervalSeconds: 7200 }, { tags: [`${marker(g.target?.org ?? g.org, g.target?.zone ?? 'ws1')}tag`] }]) }),
  setMonitorChannels: (g) => ({ body: { channelIds: channelIds(g, zoneOf(g)) } }),
  setMonitorHosts: (g) => ({ body: { hostIds: g.rng.chance(0.2) ? [] : [g.pick('host', 'body.hostIds')] } }),
  createHost: (g) => ({ body: { name: g.name('host', { org: g.org, zone: 'org' }), provider: g.name('provider', { org: g.org, zone: 'org' }) } }),
  updateHost: (g) => ({ body: g.rng.chance(0.5) ? { name: g.name('host') } : { notes: g.name('notes') } }),
  addHostMonitor: (g) => ({ body: { monitorId: g.pick('monitor', 'body.monitorId') } }),
  createStatusPage: (g) => {
    const workspaceId = g.pick('workspace', 'body.workspaceId', { zone: g.zone() });
    return { body: { name: g.name('page', g.zoneOfWorkspace(workspaceId)), workspaceId } };
  },
  updateStatusPage: (g) => ({ body: g.rng.pick<Record<string, unknown>>([{ name: g.name('page') }, { headline: g.name('headline') }, { subscribersEnabled: true }, { showResponseTimes: false }]) }),
  addStatusPageComponent: (g) => ({ body: { monitorId: g.pick('monitor', 'body.monitorId', { zone: zoneOf(g) }), displayName: g.name('component') } }),
  createChannel: (g) => {
    const orgWide = g.rng.chance(g.caller.confined ? 0.15 : 0.3);
    const workspaceId = orgWide ? null : g.pick('workspace', 'body.workspaceId', { zone: g.zone() });
    const where = g.zoneOfWorkspace(workspaceId);
    const kind = g.rng.pick(['webhook', 'email']);
    return { body: { kind, name: g.name(`${kind}-channel`, where), target: kind === 'webhook' ? `${hooks.url}/${g.name('hook', where)}` : `${g.name('mail', where)}@example.test`, workspaceId } };
  },
  updateChannel: (g) => {
    // Any of enabled, name and a target in the channel's own kind (a webhook's to the receiver, an email address).
    const body: Record<string, unknown> = {};
    if (g.rng.chance(0.6)) body.enabled = g.rng.chance(0.7);
    if (g.rng.chance(0.4)) body.name = g.name('channel');
    const kind = g.target?.info.kind;
    if (g.rng.chance(0.3) && (kind === 'webhook' || kind === 'email')) body.target = kind === 'webhook' ? `${hooks.url}/${g.name('hook')}` : `${g.name('mail')}@example.test`;
    if (Object.keys(body).length === 0) body.enabled = true;
    return { body };
  },
  createMaintenanceWindow: (g) => {
    const zone = g.zone();
    const workspaceId = g.pick('workspace', 'body.workspaceId', { zone });
    return { body: { title: g.name('maintenance', g.zoneOfWorkspace(workspaceId)), workspaceId, monitorIds: [g.pick('monitor', 'body.monitorIds', { zone })], startsAt: future(48), endsAt: future(49) } };
  },
  // Changes keep a record where it is (workspace, monitors of a policy), so the world's zones stay true.
  // One of a few bodies, built only once chosen: an id is named only when it is sent.
  updateMaintenanceWindow: (g) => ({ body: g.rng.pick<() => Record<string, unknown>>([
    () => ({ title: g.name('maintenance') }), () => ({ endsAt: future(72) }), () => ({ keepChecking: false, description: null }),
    () => ({ monitorIds: [g.pick('monitor', 'body.monitorIds', { zone: zoneOf(g) })] }),
  ])() }),
  updateSchedule: (g) => ({ body: g.rng.pick<() => Record<string, unknown>>([
    () => ({ name: g.name('schedule') }), () => ({ shiftLengthHours: 12, handoffTime: '08:00' }),
    () => ({ participantIds: [g.pick('user', 'body.participantIds')] }),
  ])() }),
  updateEscalationPolicy: (g) => ({ body: g.rng.pick<() => Record<string, unknown>>([
    () => ({ name: g.name('policy') }), () => ({ repeat: 1 }),
    () => ({ steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: g.pick('schedule', 'body.steps.targetId', { zone: zoneOf(g) }) }] }),
  ])() }),
  createSchedule: (g) => {
    const orgWide = g.rng.chance(g.caller.confined ? 0.15 : 0.3);
    const workspaceId = orgWide ? null : g.pick('workspace', 'body.workspaceId', { zone: g.zone() });
    return { body: { name: g.name('schedule', g.zoneOfWorkspace(workspaceId)), shiftLengthHours: 24, handoffTime: '09:00', participantIds: [g.pick('user', 'body.participantIds')], workspaceId } };
  },
  createOverride: (g) => {
    const h = 100 + world.next();
    return { body: { scheduleId: g.pick('schedule', 'body.scheduleId', { zone: g.zone() }), userId: g.pick('user', 'body.userId'), startsAt: future(h), endsAt: future(h + 1) } };
  },
  createEscalationPolicy: (g) => {
    const zone = g.zone();
    const monitorIds = g.rng.chance(0.2) ? [] : [g.pick('monitor', 'body.monitorIds', { zone })];
    const steps = [
      { afterMinutes: 0, targetType: 'schedule', targetId: g.pick('schedule', 'body.steps.targetId', { zone }) },
      { afterMinutes: 10, targetType: 'channel', targetId: g.pick('channel', 'body.steps.targetId', { zone: g.rng.pick([zone, 'org'] as const) }) },
    ];
    return { body: { name: g.name('policy', { org: g.org, zone: monitorIds.length ? zone : 'org' }), monitorIds, steps } };
  },
  createProbe: (g) => ({ body: { name: g.name('probe', { org: g.org, zone: 'org' }) } }),
  updateProbe: (g) => ({ body: { name: g.name('probe') } }),
  enrollAgent: (g) => {
    const orgWide = g.rng.chance(g.caller.confined ? 0.15 : 0.3);
    const workspaceId = orgWide ? null : g.pick('workspace', 'body.workspaceId', { zone: g.zone() });
    return { body: { name: g.name('agent', g.zoneOfWorkspace(workspaceId)), workspaceId } };
  },
  createErrorProject: (g) => {
    const workspaceId = g.pick('workspace', 'body.workspaceId', { zone: g.zone() });
    return { body: { name: g.name('project', g.zoneOfWorkspace(workspaceId)), workspaceId, platform: 'node' } };
  },
  updateErrorProject: (g) => ({ body: { name: g.name('project') } }),
  setErrorProjectChannels: (g) => ({ body: { channelIds: channelIds(g, zoneOf(g)) } }),
  updateErrorIssue: (g) => ({ body: g.rng.pick<Record<string, unknown>>([{ status: 'resolved' }, { status: 'ignored', ignoreHours: 24 }, { status: 'unresolved' }]) }),
  createAnalyticsSite: (g) => {
    const workspaceId = g.pick('workspace', 'body.workspaceId', { zone: g.zone() });
    const where = g.zoneOfWorkspace(workspaceId);
    return { body: { domain: `${g.name('site', where)}.example.test`, workspaceId, name: g.name('site', where) } };
  },
  updateAnalyticsSite: (g) => ({ body: { name: g.name('site') } }),
  setAnalyticsSiteChannels: (g) => ({ body: { channelIds: channelIds(g, zoneOf(g)) } }),
  updateIncident: (g) => ({ body: g.rng.pick<Record<string, unknown>>([{ status: 'acknowledged' }, { status: 'resolved' }, { comment: g.name('comment') }, { comment: g.name('comment'), publish: false }]) }),
  setIncidentPostmortem: (g) => ({ body: { body: g.name('postmortem') } }),
  createWorkspace: (g) => ({ body: { name: g.name('space', { org: g.org, zone: 'ws2' }), clientReference: g.name('client', { org: g.org, zone: 'ws2' }) } }),
  updateWorkspace: (g) => ({ body: { name: g.name('space') } }),
  inviteMember: (g) => {
    const confined = g.caller.confined || g.rng.chance(0.5);
    const workspaceIds = confined ? [g.pick('workspace', 'body.workspaceIds', { zone: g.zone() })] : [];
    return { body: { email: `${g.name('invitee', { org: g.org, zone: 'ppl' })}@example.test`, role: g.rng.pick(['admin', 'member', 'viewer']), workspaceIds } };
  },
  updateMember: (g) => ({ body: { role: g.rng.pick(['owner', 'admin', 'member', 'viewer']) } }),
  createApiKey: (g) => {
    const confined = g.caller.confined ? g.rng.chance(0.7) : g.rng.chance(0.5);
    return { body: { name: g.name('key', { org: g.org, zone: 'ppl' }), scopes: g.rng.chance(0.3) ? ['monitor:read'] : [], workspaceIds: confined ? [g.pick('workspace', 'body.workspaceIds', { zone: g.zone() })] : [], expiresInDays: 30 } };
  },
  uploadSourceMap: (g) => {
    const id = g.pick('errorProject', 'body.projectRef', { zone: g.zone() });
    const ref = world.recs.get(id)?.info.ref ?? 987_654_321;
    return { body: { projectRef: ref, filename: 'app.min.js', release: g.name('release', { org: g.org, zone: 'ws1' }), map: { version: 3, file: 'app.min.js', sources: ['app.js'], names: [], mappings: 'AAAA' } } };
  },
  uploadSymbols: (g) => {
    const id = g.pick('errorProject', 'header.X-Service-Project-Ref', { zone: g.zone() });
    const ref = world.recs.get(id)?.info.ref ?? 987_654_321;
    return { raw: { bytes: TINY_GZIP, headers: { 'content-type': 'application/octet-stream', 'x-service-project-ref': String(ref), 'x-service-platform': 'android', 'x-service-symbol-name': 'mapping.txt', 'x-service-release': 'com.example.app@1.0+1' } } };
  },
  createCheckoutSession: () => ({ body: { plan: 'pro', cadence: 'monthly' } }),
  verifyStorePurchase: () => ({ body: { transactionId: `20000${world.next()}` } }),
  signIn: (g) => ({ body: { email: `${g.name('nobody', { org: g.org, zone: 'ppl' })}@example.test`, password: 'not the password 123' } }),
  requestPasswordReset: (g) => ({ body: { email: `${g.name('nobody', { org: g.org, zone: 'ppl' })}@example.test` } }),
  resetPassword: (g) => ({ body: { token: `pr_${g.rng.base32(43)}`, password: 'a new password 12345' } }),
  signUp: (g) => ({ body: { email: `${g.name('signup', { org: g.org, zone: 'ppl' })}@example.test`, password: 'a new password 12345', name: 'Someone', organizationName: g.name('org', { org: g.org, zone: 'ppl' }) } }),
  changePassword: () => ({ body: { currentPassword: 'not the password 123', newPassword: 'another password 12345' } }),
  setActiveOrganization: (g) => ({ body: { organizationId: g.pick('organization', 'body.organizationId', { cat: g.rng.pick(['own', 'foreign', 'madeup'] as const) }) } }),
  createSmsEnrolment: () => ({ body: { phone: '+14155552671', name: 'phone' } }),
  confirmSmsEnrolment: () => ({ body: { code: '123456' } }),
};

/** A plausible body from the contract's schema for an operation with no table entry. */
function fromSchema(g: Gen): Built {
  const s = schema.bodySchema(g.route.path, g.route.method);
  if (!s) return {};
  const byField: Record<string, Kind> = { workspace: 'workspace', monitor: 'monitor', channel: 'channel', host: 'host', schedule: 'schedule', user: 'user', project: 'errorProject', probe: 'probe' };
  return {
    body: schema.plausible(s, g.route.operationId, (name) => {
      const k = Object.keys(byField).find((f) => name === `${f}Id` || name === `${f}Ids`);
      return k ? g.pick(byField[k], `body.${name}`) : undefined;
    }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Sending and judging.

interface Violation { prop: string; op: string; caller: string; transport: Transport; detail: string; excerpt: string; seed: number; index: number }
const violations: Violation[] = [];
const ownAnswers = new Map<string, Record<number, number>>();
const ownErrors = new Map<string, string>();
/** What the run saw that the spec leaves open (reported, not failed). */
const notes = new Set<string>();
/** Answers by transport and status. */
const statuses: Record<string, Record<number, number>> = {};
let opIndex = 0;

function excerpt(text: string, at: number): string {
  return text.slice(Math.max(0, at - 60), at + 80).replace(/\s+/g, ' ');
}

async function send(g: Gen, transport: Transport, req: WireRequest): Promise<WireAnswer> {
  try {
    if (transport === 'mcp') return await mcpCall(agents.get(g.caller.token)!, req);
    if ((transport === 'connect' || transport === 'connect-proto') && req.route.operationId === 'streamEvents') return await connectStreamCall(server.url, req, transport === 'connect-proto');
    if (transport === 'connect' || transport === 'connect-proto') return await connectCall(server.url, req, transport === 'connect-proto');
    return await restCall(server.url, req);
  } catch (e) {
    return { status: 0, code: 'no_answer', error: (e as Error).message, texts: [] };
  }
}

/** 502s the spec lists (a provider refused): not a failure of the service. */
const SPEC_502 = new Set(['confirmation_not_sent', 'verification_code_not_sent']);
/** 503s the contract documents (no SMS provider configured on this server, as in these tests): not a failure either. */
const CONTRACT_503 = new Set(['sms_unavailable']);

function judge(g: Gen, transport: Transport, req: WireRequest, a: WireAnswer, flag: (prop: string, detail: string, excerptText?: string) => void): void {
  const c = g.caller;
  const r = g.route;
  const ok = a.status >= 200 && a.status < 300;
  // P1: no 5xx (nor no answer at all).
  // (Connect carries a 502 as its code `unavailable`, whose HTTP status the Connect protocol fixes at 503.)
  const provider = (SPEC_502.has(a.code ?? '') && (a.status === 502 || (transport !== 'rest' && transport !== 'mcp' && a.status === 503)))
    || (CONTRACT_503.has(a.code ?? '') && a.status === 503);
  if (a.status >= 500 && !provider) flag('P1 5xx', `${a.status} ${a.code ?? ''}`, a.texts.join(' ').slice(0, 160));
  if (a.status === 0) flag('P1 no answer', a.code ?? '', (a.error ?? '').slice(0, 160));

  // P2: no 2xx naming a foreign or out-of-confinement id (hostIds: dropped, not refused).
  if (ok) {
    for (const n of g.named) {
      const refuse = n.cat === 'foreign' || n.cat === 'ooc' || (n.cat === 'beyond' && g.write);
      if (!refuse) continue;
      if (r.method === 'GET' && n.where.startsWith('query.')) continue; // a list filter: P5 compares it with a made-up one
      if (r.operationId === 'setMonitorHosts' && n.where === 'body.hostIds') {
        const kept = JSON.stringify(a.json ?? '').includes(n.id);
        if (kept) flag('P2 dropped id kept', `${n.cat} ${n.kind} in ${n.where} is in the answer`);
        continue;
      }
      flag('P2 2xx naming outside id', `${n.cat} ${n.kind} in ${n.where}`, a.texts[0]?.slice(0, 160));
    }
  }

  // P3 and P4: what a body may not carry.
  const asked = JSON.stringify({ p: req.path, q: req.query, b: req.body, h: req.raw?.headers }).toLowerCase();
  for (const text of a.texts) {
    for (const m of text.matchAll(MARKED_WORD)) {
      const word = m[0].toLowerCase();
      if (asked.includes(word)) continue;
      const org = word[3] === 'a' ? 'A' : 'B';
      const zone = word.slice(5, 8);
      if (org !== c.org) flag('P3 foreign name', `${word.replace(/-\d+$/, '-N').replace(/\d+/g, 'N')}`, excerpt(text, m.index!));
      else if (c.confined && zone === 'ws2') flag('P3 out-of-confinement name', `${word.replace(/-\d+$/, '-N').replace(/\d+/g, 'N')}`, excerpt(text, m.index!));
    }
    for (const m of text.matchAll(ID_LIKE)) {
      const id = m[0];
      if (asked.includes(id)) continue;
      const rec = world.recs.get(id);
      if (!rec) continue;
      if (rec.org !== c.org) flag('P3 foreign id', `${rec.kind} (${rec.zone})`, excerpt(text, m.index!));
      else if (hiddenFrom(c, rec)) flag('P3 out-of-confinement id', `${rec.kind} (${rec.zone})`, excerpt(text, m.index!));
    }
    for (const s of world.secrets.values()) {
      if (s.allowedIn.has(r.operationId)) continue;
      const at = text.indexOf(s.value);
      if (at >= 0 && !asked.includes(s.value.toLowerCase())) flag('P4 secret', s.what, excerpt(text, at).replace(s.value, `<${s.what}>`));
    }
  }

  // P6: a write the caller lacks the permission for never lands, and is 403 naming it.
  if (g.write && !r.anonymous && !r.sessionOnly) {
    if (c.role === 'viewer' && ok) flag('P6 viewer write landed', `${a.status}`);
    if (r.permission !== null && !holds(c, r.permission as Permission)) {
      if (ok) flag('P6 write without permission landed', `${r.permission}: ${a.status}`);
      else if (a.status !== 403 || !a.vars?.permission) flag('P6 lacking permission not 403 naming it', `${r.permission}: ${a.status} ${a.code}`);
    }
  }
  // P7: every 403 names the permission (sign-up, closed, is no permission's refusal).
  if (a.status === 403 && a.code !== 'session_required' && !r.anonymous && !a.vars?.permission) {
    // Granting or touching a role above one's own is refused by rank, not for a missing permission: noted, not judged.
    if (a.code === 'role_above_own') notes.add(`${r.operationId}: 403 role_above_own carries vars ${JSON.stringify(a.vars)}, no permission`);
    else flag('P7 403 without vars.permission', `${a.code}`, a.error);
  }
}

/** The fields P5 compares, with the id itself written as <id>. */
function comparable(a: WireAnswer, id: string): string {
  const norm = (v: unknown) => JSON.stringify(v ?? null).split(id).join('<id>');
  const ok = a.status >= 200 && a.status < 300;
  return JSON.stringify({ status: a.status, code: a.code ?? null, error: norm(a.error), vars: norm(a.vars), ...(ok ? { data: norm(a.json?.data ?? a.json) } : {}) });
}

/** Records what a 2xx create made, so later requests name it and leaks of it are seen. */
function remember(g: Gen, req: WireRequest, a: WireAnswer): void {
  const d = a.json?.data;
  if (!d || typeof d !== 'object') return;
  const body = (req.body ?? {}) as Record<string, any>;
  const where = g.zoneOfWorkspace(body.workspaceId === undefined ? undefined : body.workspaceId);
  const wsOrg = { org: where.org, zone: body.workspaceId === null ? 'org' as Zone : where.zone };
  const kinds: Record<string, Kind> = {
    createMonitor: 'monitor', createHost: 'host', createStatusPage: 'statusPage', createChannel: 'channel', createMaintenanceWindow: 'maintenance',
    createSchedule: 'schedule', enrollAgent: 'agent', createErrorProject: 'errorProject', createAnalyticsSite: 'analyticsSite', createWorkspace: 'workspace',
    inviteMember: 'invitation', createApiKey: 'apiKey', createOverride: 'override', createEscalationPolicy: 'policy', addStatusPageComponent: 'component',
    createProbe: 'probe',
  };
  const kind = kinds[g.route.operationId];
  const tokenOf: Record<string, string> = { createApiKey: 'an API key token', createProbe: 'a probe token' };
  if (d.token) world.secret(d.token, tokenOf[g.route.operationId] ?? 'an agent token');
  if (d.secret) world.secret(d.secret, 'a webhook signing secret');
  if (g.route.operationId === 'getMonitorPushUrl' && typeof d.url === 'string') world.secret(d.url.split('/ping/')[1]?.split('/')[0], 'a heartbeat token', ['getMonitorPushUrl']);
  if (g.route.operationId === 'rotateIncidentFeed' && typeof d.rssUrl === 'string') world.secret(d.rssUrl.split('/feeds/incidents/')[1]?.split('/')[0], 'an incident feed token');
  if (!kind || typeof d.id !== 'string' || world.recs.has(d.id)) return;
  let org = wsOrg.org;
  let zone: Zone = wsOrg.zone;
  const ref = (id: string | undefined) => (id ? world.recs.get(id) : undefined);
  if (kind === 'host' || kind === 'probe') { org = g.org; zone = 'org'; }
  if (kind === 'workspace') { org = g.org; zone = 'ws2'; }
  if (kind === 'invitation' || kind === 'apiKey') {
    const ws = (body.workspaceIds ?? []) as string[];
    const beyond = !(ws.length > 0 && ws.every((w) => ref(w)?.zone === 'ws1')) && !(g.caller.confined && ws.length === 0);
    world.add(kind, g.org, 'ppl', d.id, { email: body.email, confinement: ws.length ? 'some' : 'none', membershipId: g.caller.membershipId }, beyond);
    return;
  }
  if (kind === 'override') { const s = ref(body.scheduleId); if (s) { org = s.org; zone = s.zone; } }
  const pageId = kind === 'component' ? req.path.id : undefined;
  if (pageId) { const p = ref(pageId); if (p) { org = p.org; zone = p.zone; } }
  if (kind === 'policy') {
    const ms = ((body.monitorIds ?? []) as string[]).map(ref).filter(Boolean) as Rec[];
    org = ms[0]?.org ?? g.org;
    zone = ms.length === 0 ? 'org' : ms.some((m) => m.zone === 'ws2') ? 'ws2' : 'ws1';
  }
  world.add(kind, org, zone, d.id, { name: body.name, pageId, ref: d.ref, publicKey: d.publicKey, ...(kind === 'channel' ? { kind: body.kind } : {}) });
}

/** One operation by one caller over one transport, judged; P5 compared against a made-up id where it named an outside one. */
async function runOne(rng: Rng, route: RouteDef, caller: Caller, transport: Transport): Promise<void> {
  const g = new Gen(rng, caller, route);
  const req: WireRequest = { route, token: caller.token, path: {}, query: {} };
  const flag = (prop: string, detail: string, ex = '') => violations.push({ prop, op: route.operationId, caller: `${caller.org}:${caller.name}`, transport, detail, excerpt: ex, seed: SEED, index: opIndex });
  let primary: { in: 'path' | 'query'; name: string; kind: Kind } | undefined;

  // Path parameters.
  for (const p of route.pathParams) {
    if (p === 'entity') { req.path[p] = rng.pick(EXPORT_ENTITIES); continue; }
    const kind = PATH_KIND.find(([re]) => re.test(route.path))?.[1];
    if (!kind) { req.path[p] = g.madeUp('monitor'); continue; }
    const q = QUERY_PRIMARY[route.operationId];
    if (q && !q.optional && (route.operationId !== 'removeHostMonitor' || rng.chance(0.5))) {
      // The query id is the one chosen widely; the path names its parent, in the same reach.
      continue;
    }
    primary = { in: 'path', name: p, kind };
    const cat = g.category(kind, true);
    let id: string;
    if (EPHEMERAL.has(route.operationId) && cat !== 'madeup') {
      const rec = await ephemeral(kind, cat === 'foreign' ? other(caller.org) : caller.org, cat, g);
      if (rec) { g.made.push(rec); g.named.push({ kind, id: rec.id, cat, where: `path.${p}` }); id = rec.id; g.target = rec; }
      else { id = g.pick(kind, `path.${p}`, { cat, primary: true }); g.target = world.recs.get(id); }
    } else {
      id = g.pick(kind, `path.${p}`, { cat, primary: true });
      g.target = world.recs.get(id);
    }
    req.path[p] = id;
  }
  // A query id chosen widely (and the path parent of it).
  const q = QUERY_PRIMARY[route.operationId];
  if (q && !primary && (!q.optional || rng.chance(0.5))) {
    primary = { in: 'query', name: q.name, kind: q.kind };
    const cat = g.category(q.kind, true);
    let rec: Rec | undefined;
    if (EPHEMERAL.has(route.operationId) && cat !== 'madeup') {
      const made = await ephemeral(q.kind, cat === 'foreign' ? other(caller.org) : caller.org, cat, g);
      if (made) { g.made.push(made); g.named.push({ kind: q.kind, id: made.id, cat, where: `query.${q.name}` }); rec = made; }
    }
    const id = rec?.id ?? g.pick(q.kind, `query.${q.name}`, { cat, primary: true });
    rec ??= world.recs.get(id);
    req.query[q.name] = id;
    if (route.pathParams.includes('id')) {
      // The parent in the path: the record's own (a component's page, a subscriber's page), or one of the caller's
      // (an outside component under the caller's own page must be as unknown there as a made-up one).
      const own = rec?.org === caller.org && !hiddenFrom(caller, rec);
      req.path.id = rec?.info.pageId && (own || rng.chance(0.5))
        ? rec.info.pageId
        : g.pick(route.operationId === 'removeHostMonitor' ? 'host' : 'statusPage', 'path.id', { cat: 'own' });
    }
  } else if (q && primary && route.operationId === 'removeHostMonitor') {
    req.query.monitorId = g.pick('monitor', 'query.monitorId', { cat: 'own' });
  } else if (q && !q.optional && !req.query[q.name]) {
    req.query[q.name] = g.pick(q.kind, `query.${q.name}`);
  }
  if (route.pathParams.includes('id') && !req.path.id) req.path.id = g.pick('statusPage', 'path.id', { cat: 'own' });

  // Query and body.
  // Without a table entry, a required body comes from the contract's schema (an optional one, beside a query id, is left out).
  const built = (BUILD[route.operationId] ?? (route.body === 'required' && !route.rawRequest ? fromSchema : () => ({})))(g);
  Object.assign(req.query, built.query ?? {});
  if (built.body !== undefined) req.body = built.body;
  if (built.raw) req.raw = built.raw;
  if (route.body === 'required' && req.body === undefined && !req.raw) req.body = {};

  const a = await send(g, transport, req);
  judge(g, transport, req, a, flag);
  const tally = (statuses[transport] ??= {});
  tally[a.status] = (tally[a.status] ?? 0) + 1;
  // How often a request of the caller's own reach, with the permission, succeeded (a generator that never does tests little).
  if (g.named.every((n) => n.cat === 'own') && (route.permission === null || holds(caller, route.permission as Permission))) {
    const st = ownAnswers.get(route.operationId) ?? {};
    st[a.status] = (st[a.status] ?? 0) + 1;
    ownAnswers.set(route.operationId, st);
    if (a.status >= 400 && !ownErrors.has(route.operationId)) ownErrors.set(route.operationId, `${caller.name} ${transport} ${JSON.stringify(req.body ?? req.query).slice(0, 200)} → ${a.status} ${a.code} ${a.error}`);
  }
  if (a.status >= 200 && a.status < 300) {
    remember(g, req, a);
    // What a delete ended is no longer named (a host's monitor link, removed, leaves the monitor).
    if (route.method === 'DELETE' && route.operationId !== 'removeHostMonitor') {
      for (const n of g.named) if (['path.id', 'query.id', 'query.component', 'query.subscriber'].includes(n.where) && !(n.where === 'path.id' && QUERY_PRIMARY[route.operationId])) { const r = world.recs.get(n.id); if (r) r.alive = false; }
    }
  }

  // P5: the outside id answers as a made-up one.
  if (primary) {
    const where = `${primary.in}.${primary.name}`;
    const n = g.named.find((x) => x.where === where);
    if (n && (n.cat === 'foreign' || n.cat === 'ooc')) {
      const madeUp = g.madeUp(n.kind);
      const twin: WireRequest = { ...req, path: { ...req.path }, query: { ...req.query } };
      if (primary.in === 'path') twin.path[primary.name] = madeUp; else twin.query[primary.name] = madeUp;
      const b = await send(g, transport, twin);
      const [x, y] = [comparable(a, n.id), comparable(b, madeUp)];
      if (x !== y) flag('P5 outside differs from made-up', `${n.cat} ${n.kind} in ${where}`, `outside ${x.slice(0, 220)} | made-up ${y.slice(0, 220)}`);
    }
  }
  await cleanup(g.made.filter((r) => r.alive));
}

/** A de-duplicated, readable summary: one line per property, operation and detail. */
function summary(list: Violation[], cap = 50): string {
  const groups = new Map<string, { v: Violation; callers: Set<string>; transports: Set<string>; n: number }>();
  for (const v of list) {
    const key = `${v.prop} | ${v.op} | ${v.detail}`;
    const e = groups.get(key) ?? { v, callers: new Set(), transports: new Set(), n: 0 };
    e.callers.add(v.caller);
    e.transports.add(v.transport);
    e.n++;
    groups.set(key, e);
  }
  const lines = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))
    .map(([key, e]) => `${key} ×${e.n} [${[...e.callers].join(',')}] (${[...e.transports].join(',')}) «${e.v.excerpt.slice(0, 160)}»`);
  const shown = lines.slice(0, cap);
  if (lines.length > cap) shown.push(`… and ${lines.length - cap} more groups (PROPERTY_REPORT=<file> writes them all)`);
  return `${lines.length} kinds of violation in ${list.length} findings (PROPERTY_SEED=${SEED}, PROPERTY_OPS=${OPS}):\n${shown.join('\n')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The issue's reproductions, each a test of its own.

describe('a caller confined to workspaces cannot reach people, keys and invitations beyond them', () => {
  const cases = [
    { by: 'ws1-key', own: 'ws1', beyond: 'ws2' },
    { by: 'ws2-admin-session', own: 'ws2', beyond: 'ws1' },
  ] as const;
  const callerOf = (name: string): Caller => world.orgs.A.callers.find((c) => c.name === name) ?? world.orgs.A.extra[name];
  const role = async (membershipId: string) => (await server.db.selectFrom('memberships').select('role').where('id', '=', membershipId).executeTakeFirst())?.role;

  test.each(cases)('$by cannot PATCH an unconfined member to owner', async ({ by }) => {
    const target = await world.member('A', 'member', 'none');
    const res = await callerOf(by).api.patch(`/members/${target.id}`, { role: 'owner' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await role(target.id)).toBe('member');
  });

  test.each(cases)('$by cannot demote an unconfined admin', async ({ by }) => {
    const target = await world.member('A', 'admin', 'none');
    const res = await callerOf(by).api.patch(`/members/${target.id}`, { role: 'viewer' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await role(target.id)).toBe('admin');
  });

  test.each(cases)('$by cannot DELETE an unconfined member', async ({ by }) => {
    const target = await world.member('A', 'member', 'none');
    const res = await callerOf(by).api.delete(`/members/${target.id}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await role(target.id)).toBe('member');
  });

  const revoked = async (id: string) => (await server.db.selectFrom('api_keys').select('revoked_at').where('id', '=', id).executeTakeFirstOrThrow()).revoked_at;

  test.each(cases)("$by cannot revoke the owner's unconfined key", async ({ by }) => {
    const key = await world.apiKey('A', 'none');
    const res = await callerOf(by).api.delete(`/api-keys?id=${key.id}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await revoked(key.id)).toBeNull();
  });

  test.each(cases)('$by cannot revoke a key confined to the other workspace ($beyond)', async ({ by, beyond }) => {
    const key = await world.apiKey('A', beyond);
    const res = await callerOf(by).api.delete(`/api-keys?id=${key.id}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await revoked(key.id)).toBeNull();
  });

  test.each(cases)('$by cannot withdraw an invitation to the other workspace ($beyond)', async ({ by, beyond }) => {
    const inv = await world.invitation('A', beyond);
    const res = await callerOf(by).api.delete(`/invitations/${inv.id}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await server.db.selectFrom('invitations').select('id').where('id', '=', inv.id).executeTakeFirst()).toBeTruthy();
  });

  test.each(['ws1-key', 'ws1-admin-session'])('%s: GET /api-keys and GET /members show no ws2 id in workspaceIds', async (by) => {
    const c = callerOf(by);
    const ws2 = world.orgs.A.ws2;
    const keys = await c.api.get('/api-keys');
    const members = await c.api.get('/members');
    expect(keys.status).toBe(200);
    expect(members.status).toBe(200);
    const withWs2 = (rows: { id: string; workspaceIds: string[] | null }[]) => rows.filter((r) => (r.workspaceIds ?? []).includes(ws2)).map((r) => r.id);
    expect({
      keys: withWs2(keys.body.data),
      members: withWs2(members.body.data.members),
      invitations: withWs2(members.body.data.invitations),
    }).toEqual({ keys: [], members: [], invitations: [] });
  });
});

describe('on-call, seen and changed by a key confined to ws1', () => {
  const ws1Key = () => world.orgs.A.callers.find((c) => c.name === 'ws1-key')!;

  test('GET /on-call has no id of a ws2 schedule or channel', async () => {
    // A policy of ws1 monitors whose steps reach ws2's schedule and channel (made by the unconfined owner).
    const crossed = await world.policy('A', 'ws1', { stepChannelZone: 'ws2', name: `${marker('A', 'ws1')}policy-steps-to-ws2` }).catch(() => null);
    const res = await ws1Key().api.get('/on-call');
    if (crossed) await cleanup([crossed]);
    expect(res.status).toBe(200);
    const text = JSON.stringify(res.body);
    const leaked = [...world.recs.values()].filter((r) => r.org === 'A' && r.zone === 'ws2' && (r.kind === 'schedule' || r.kind === 'channel') && text.includes(r.id));
    expect(leaked.map((r) => `${r.kind} ${r.id} (${r.info.name})`)).toEqual([]);
  });

  test('DELETE /on-call/overrides/<override of a ws2 schedule> answers as a made-up id', async () => {
    const ovr = await world.override('A', 'ws2');
    const outside = await ws1Key().api.delete(`/on-call/overrides/${ovr.id}`);
    const madeUp = await ws1Key().api.delete('/on-call/overrides/ovr_00000000000000000000');
    const view = (r: { status: number; body: any }) => ({ status: r.status, code: r.body?.code, error: r.body?.error, vars: r.body?.vars });
    expect(view(outside)).toEqual(view(madeUp));
    expect(await server.db.selectFrom('oncall_overrides').select('id').where('id', '=', ovr.id).executeTakeFirst()).toBeTruthy();
  });
});

test('GET /audit?before=<an entry a ws1 key cannot see> answers as a made-up cursor', async () => {
  const ws1Key = world.orgs.A.callers.find((c) => c.name === 'ws1-key')!;
  const view = (r: { status: number; body: any }) => ({ status: r.status, code: r.body?.code, error: r.body?.error, vars: r.body?.vars });
  const madeUp = view(await ws1Key.api.get('/audit?limit=5&before=aud_00000000000000000000'));
  for (const zone of ['ws2', 'org'] as const) {
    const entry = world.pool('A', 'audit', (r) => r.zone === zone)[0];
    expect({ zone, ...view(await ws1Key.api.get(`/audit?limit=5&before=${entry.id}`)) }).toEqual({ zone, ...madeUp });
  }
});

describe('organisation-wide changes by a key confined to ws1: 403 naming the permission', () => {
  const ws1Key = () => world.orgs.A.callers.find((c) => c.name === 'ws1-key')!;
  const refused = (res: { status: number; body: any }) => ({ status: res.status, permission: typeof res.body?.vars?.permission === 'string' });

  test('POST /workspaces', async () => {
    expect(refused(await ws1Key().api.post('/workspaces', { name: `${marker('A', 'ws2')}by-confined` }))).toEqual({ status: 403, permission: true });
  });
  test('POST /incident-feed', async () => {
    expect(refused(await ws1Key().api.post('/incident-feed'))).toEqual({ status: 403, permission: true });
  });
  test('POST /channels without a workspace (organisation-wide)', async () => {
    expect(refused(await ws1Key().api.post('/channels', { kind: 'webhook', name: `${marker('A', 'org')}by-confined`, target: `${hooks.url}/x`, workspaceId: null }))).toEqual({ status: 403, permission: true });
  });
  test('POST /agents without a workspace', async () => {
    expect(refused(await ws1Key().api.post('/agents', { name: `${marker('A', 'org')}agent-by-confined` }))).toEqual({ status: 403, permission: true });
  });
  test('POST /probes, PATCH and DELETE /probes/{id} (a probe belongs to the organisation)', async () => {
    expect(refused(await ws1Key().api.post('/probes', { name: `${marker('A', 'org')}probe-by-confined` }))).toEqual({ status: 403, permission: true });
    const probe = world.pool('A', 'probe')[0];
    const row = () => server.db.selectFrom('probes').select(['name', 'revoked_at']).where('id', '=', probe.id).executeTakeFirstOrThrow();
    const before = await row();
    expect(refused(await ws1Key().api.patch(`/probes/${probe.id}`, { name: `${marker('A', 'org')}probe-renamed` }))).toEqual({ status: 403, permission: true });
    expect(refused(await ws1Key().api.delete(`/probes/${probe.id}`))).toEqual({ status: 403, permission: true });
    expect(await row()).toEqual(before);
  });
  test('POST /on-call/schedules without a workspace', async () => {
    expect(refused(await ws1Key().api.post('/on-call/schedules', { name: `${marker('A', 'org')}schedule-by-confined`, shiftLengthHours: 24, handoffTime: '09:00', participantIds: [world.orgs.A.owner.userId] }))).toEqual({ status: 403, permission: true });
  });
  test('DELETE /setup', async () => {
    const res = await ws1Key().api.delete('/setup');
    const org = await server.db.selectFrom('organizations').select('setup_dismissed_at').where('id', '=', world.orgs.A.organizationId).executeTakeFirstOrThrow();
    expect({ ...refused(res), dismissed: org.setup_dismissed_at !== null }).toEqual({ status: 403, permission: true, dismissed: false });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The run.

test('the checks see what they look for (an unconfined answer judged as if a confined or foreign caller had it)', async () => {
  const owner = world.orgs.A.callers.find((c) => c.name === 'owner-key')!;
  const route = routes.find((r) => r.operationId === 'listMonitors')!;
  const req: WireRequest = { route, token: owner.token, path: {}, query: {} };
  const answer = await restCall(server.url, req);
  expect(answer.status).toBe(200);
  const seen = (as: Caller, extra = '') => {
    const found = new Set<string>();
    const a = { ...answer, texts: [answer.texts[0] + extra] };
    judge(new Gen(new Rng(1), as, route), 'rest', req, a, (prop) => found.add(prop));
    return [...found].sort();
  };
  const secret = [...world.secrets.values()].find((x) => x.what === 'an agent token')!.value;
  expect(seen(owner)).toEqual([]);
  expect(seen(world.orgs.A.callers.find((c) => c.name === 'ws1-key')!)).toEqual(['P3 out-of-confinement id', 'P3 out-of-confinement name']);
  expect(seen(world.orgs.B.callers.find((c) => c.name === 'owner-key')!)).toEqual(['P3 foreign id', 'P3 foreign name']);
  expect(seen(owner, secret)).toEqual(['P4 secret']);
});

test('random operations by every kind of caller over every transport: no 5xx, no reach beyond the caller, no secret', async () => {
  const rng = new Rng(SEED);
  const doc = parse(fs.readFileSync(path.join(__dirname, '..', 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
  const ops = Object.entries(doc.paths).flatMap(([, methods]) => Object.values(methods).map((o) => o?.operationId).filter((x): x is string => !!x));
  const byId = new Map<string, RouteDef>(routes.map((r) => [r.operationId, r]));
  expect(ops.filter((o) => !byId.has(o))).toEqual([]);
  const callers = world.callers();
  const sent = new Map<string, number>();
  const spent = new Map<string, number>();
  const transports: Record<string, number> = {};
  const started = Date.now();
  let order: string[] = [];
  for (opIndex = 0; opIndex < OPS; opIndex++) {
    if (!order.length) order = rng.shuffle(ops);
    const route = byId.get(order.pop()!)!;
    // Operations that hash a password (a deliberately slow scrypt) are sent a few times only.
    if ((sent.get(route.operationId) ?? 0) >= (SLOW_OPS[route.operationId] ?? Infinity)) { opIndex--; continue; }
    // Confined callers, whose reach has edges inside their own organisation, ask twice as often.
    let caller = rng.pick([...callers, ...callers.filter((c) => c.confined)]);
    // Deleting the account would end the caller (sessions only; keys are refused it): a key asks.
    if (route.operationId === 'deleteAccount' && caller.kind === 'session') caller = rng.pick(callers.filter((c) => c.kind === 'key'));
    const mcp = toolNames.has(route.operationId);
    let transport: Transport = rng.weighted<Transport>({ rest: 60, connect: 12, 'connect-proto': 8, mcp: mcp ? 20 : 0 });
    if (route.rawRequest && transport !== 'mcp') transport = 'rest';
    // The event stream is no tool (it never ends): REST or Connect's server stream.
    if (route.operationId === 'streamEvents' && transport === 'mcp') transport = 'rest';
    transports[transport] = (transports[transport] ?? 0) + 1;
    const t = Date.now();
    await runOne(rng, route, caller, transport);
    sent.set(route.operationId, (sent.get(route.operationId) ?? 0) + 1);
    spent.set(route.operationId, (spent.get(route.operationId) ?? 0) + Date.now() - t);
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  // Counts a confined caller is given of what it cannot see: the spec's properties speak of ids and names; noted.
  for (const c of callers.filter((x) => x.confined)) {
    const visible = (await c.api.get('/monitors')).body?.data?.length;
    const me = (await c.api.get('/me')).body?.data?.usage?.monitors;
    const sum = (await c.api.get('/summary')).body?.data?.total;
    if (me !== visible) notes.add(`getMe for a confined caller: usage.monitors ${me} counts monitors it cannot see (GET /monitors lists ${visible})`);
    if (sum !== visible) notes.add(`getSummary for a confined caller: total ${sum}, GET /monitors lists ${visible}`);
  }
  console.log(`access property run: ${OPS} operations in ${seconds} s, seed ${SEED}, answers ${JSON.stringify(statuses)}, ${violations.length} findings; slowest: ${[...spent].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([o, ms]) => `${o} ${ms} ms/${sent.get(o)}`).join(', ')}`);
  if (process.env.PROPERTY_REPORT) fs.writeFileSync(process.env.PROPERTY_REPORT, JSON.stringify({ violations, notes: [...notes], ownAnswers: Object.fromEntries(ownAnswers), ownErrors: Object.fromEntries(ownErrors) }, null, 1));
  // Every operation of the contract was sent.
  expect(ops.filter((o) => !sent.has(o))).toEqual([]);
  if (notes.size) console.log(`access property notes (not failures):\n${[...notes].join('\n')}`);
  if (violations.length) throw new Error(summary(violations));
}, 600_000);
