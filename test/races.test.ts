import pg from 'pg';
import { sql } from 'kysely';
import { clockOf, withTransactionRetries } from '../src/db/connect';
import { asApiError } from '../src/transport/respond';
import { freshDatabase, startTestServer, type ApiClient, type ApiResponse, type TestServer } from './support/harness';
import { startChild, type ChildServer } from './support/child';

// Issue 25, item 1: an operation racing a delete of its parent (or of a
// record it names) answers 2xx, 404 (the parent is gone) or 409 (a state
// conflict) in the spec's error shape — never a 5xx. Every pair of the
// contract where a create or an update hangs from a record another request
// may delete is raced ROUNDS times (PAIR_ROUNDS for the pairs of the issue).
// Also: two servers started at once on an empty database both come up and
// exactly one creates the first organisation and prints its key.

const ROUNDS = Number(process.env.RACE_ROUNDS ?? 4);
const PAIR_ROUNDS = Number(process.env.RACE_PAIR_ROUNDS ?? 8);

let srv: TestServer;
let api: ApiClient;
let owner: { organizationId: string; workspaceId: string; userId: string; apiKey: string };
let n = 0;
const uniq = () => `${Date.now().toString(36)}${(++n).toString(36)}`;

beforeAll(async () => {
  srv = await startTestServer({ RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000' });
  owner = await srv.org({ plan: 'enterprise' });
  api = srv.api(owner.apiKey);
}, 60_000);
afterAll(() => srv?.close());

/** The data of a 2xx answer, or a thrown error saying what the set-up step got instead. */
function data(what: string, r: ApiResponse): any {
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body?.data;
}

const make = {
  workspace: async () => data('workspace', await api.post('/workspaces', { name: `ws ${uniq()}` })).id as string,
  monitor: async (workspaceId = owner.workspaceId) => data('monitor', await api.post('/monitors', {
    name: `m ${uniq()}`, kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://example.test/' }),
  })).id as string,
  host: async () => data('host', await api.post('/hosts', { name: `h-${uniq()}.example.test` })).id as string,
  page: async (workspaceId = owner.workspaceId) => data('page', await api.post('/status-pages', { name: `p ${uniq()}`, workspaceId })).id as string,
  channel: async () => data('channel', await api.post('/channels', { kind: 'webhook', name: `c ${uniq()}`, target: 'http://127.0.0.1:9/hook' })).id as string,
  project: async (workspaceId = owner.workspaceId) => data('project', await api.post('/errors/projects', { name: `e ${uniq()}`, workspaceId })).id as string,
  site: async (workspaceId = owner.workspaceId) => data('site', await api.post('/analytics', { domain: `s${uniq()}.example.test`, workspaceId })).id as string,
  schedule: async (workspaceId?: string) => data('schedule', await api.post('/on-call/schedules', {
    name: `s ${uniq()}`, shiftLengthHours: 24, handoffTime: '09:00', participantIds: [owner.userId], ...(workspaceId ? { workspaceId } : {}),
  })).id as string,
  member: async () => (await srv.member(owner.organizationId, 'member')).membershipId,
};

const HOUR = 3_600_000;
const later = (h: number) => new Date(Date.now() + h * HOUR).toISOString();

interface Pair {
  /** `operation vs delete`, as the report names it. */
  name: string;
  setup: () => Promise<Record<string, string>>;
  op: (ids: Record<string, string>) => Promise<ApiResponse>;
  del: (ids: Record<string, string>) => Promise<ApiResponse>;
  /** The issue's own pairs run more rounds. */
  listed?: boolean;
  /**
   * A refusal the contract gives when the deleted record is named in the
   * body, raced or not: a set of channel ids naming one that is gone is 400
   * `unknown_channel` (channelIds.N); a maintenance window naming a monitor
   * that is not (or no longer) in its workspace is 400 naming monitorIds.N.
   */
  refusal?: string;
}

const PAIRS: Pair[] = [
  // The pairs of the issue.
  { name: 'createOverride vs deleteSchedule', listed: true, setup: async () => ({ s: await make.schedule() }),
    op: ({ s }) => api.post('/on-call/overrides', { scheduleId: s, userId: owner.userId, startsAt: later(1), endsAt: later(2) }),
    del: ({ s }) => api.delete(`/on-call/schedules/${s}`) },
  { name: 'setErrorProjectChannels vs deleteErrorProject', listed: true, setup: async () => ({ p: await make.project(), c: await make.channel() }),
    op: ({ p, c }) => api.put(`/errors/projects/${p}/channels`, { channelIds: [c] }), del: ({ p }) => api.delete(`/errors/projects/${p}`) },
  { name: 'updateStatusPage vs deleteStatusPage', listed: true, setup: async () => ({ p: await make.page() }),
    op: ({ p }) => api.patch(`/status-pages/${p}`, { headline: `h ${uniq()}` }), del: ({ p }) => api.delete(`/status-pages/${p}`) },
  { name: 'createMonitor vs deleteWorkspace', listed: true, setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/monitors', { name: 'm', kind: 'http', workspaceId: w, config: JSON.stringify({ url: 'https://example.test/' }) }),
    del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'addStatusPageComponent vs deleteMonitor', listed: true, setup: async () => ({ p: await make.page(), m: await make.monitor() }),
    op: ({ p, m }) => api.post(`/status-pages/${p}/components`, { monitorId: m }), del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'addHostMonitor vs deleteMonitor', listed: true, setup: async () => ({ h: await make.host(), m: await make.monitor() }),
    op: ({ h, m }) => api.post(`/hosts/${h}/monitors`, { monitorId: m }), del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'updateHost vs deleteHost', listed: true, setup: async () => ({ h: await make.host() }),
    op: ({ h }) => api.patch(`/hosts/${h}`, { notes: `n ${uniq()}` }), del: ({ h }) => api.delete(`/hosts/${h}`) },

  // Hosts and their monitors.
  { name: 'addHostMonitor vs deleteHost', setup: async () => ({ h: await make.host(), m: await make.monitor() }),
    op: ({ h, m }) => api.post(`/hosts/${h}/monitors`, { monitorId: m }), del: ({ h }) => api.delete(`/hosts/${h}`) },
  { name: 'addHostMonitor (already linked) vs deleteHost', setup: async () => {
    const ids = { h: await make.host(), m: await make.monitor() };
    data('link', await api.post(`/hosts/${ids.h}/monitors`, { monitorId: ids.m }));
    return ids;
  }, op: ({ h, m }) => api.post(`/hosts/${h}/monitors`, { monitorId: m }), del: ({ h }) => api.delete(`/hosts/${h}`) },
  { name: 'removeHostMonitor vs deleteMonitor', setup: async () => {
    const ids = { h: await make.host(), m: await make.monitor() };
    data('link', await api.post(`/hosts/${ids.h}/monitors`, { monitorId: ids.m }));
    return ids;
  }, op: ({ h, m }) => api.delete(`/hosts/${h}/monitors?monitorId=${m}`), del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'setMonitorHosts vs deleteMonitor', setup: async () => ({ h: await make.host(), m: await make.monitor() }),
    op: ({ h, m }) => api.put(`/monitors/${m}/hosts`, { hostIds: [h] }), del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'setMonitorHosts vs deleteHost', setup: async () => ({ h: await make.host(), m: await make.monitor() }),
    op: ({ h, m }) => api.put(`/monitors/${m}/hosts`, { hostIds: [h] }), del: ({ h }) => api.delete(`/hosts/${h}`) },

  // Monitors and what hangs from them.
  { name: 'updateMonitor vs deleteMonitor', setup: async () => ({ m: await make.monitor() }),
    op: ({ m }) => api.patch(`/monitors/${m}`, { name: `m ${uniq()}` }), del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'deleteMonitor vs deleteMonitor', setup: async () => ({ m: await make.monitor() }),
    op: ({ m }) => api.delete(`/monitors/${m}`), del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'createMonitor (dependsOn) vs deleteMonitor', setup: async () => ({ m: await make.monitor() }),
    op: ({ m }) => api.post('/monitors', { name: 'd', kind: 'http', workspaceId: owner.workspaceId, dependsOn: [m], config: JSON.stringify({ url: 'https://example.test/' }) }),
    del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'setMonitorChannels vs deleteMonitor', setup: async () => ({ m: await make.monitor(), c: await make.channel() }),
    op: ({ m, c }) => api.put(`/monitors/${m}/channels`, { channelIds: [c] }), del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'setMonitorChannels vs deleteChannel', refusal: 'unknown_channel', setup: async () => ({ m: await make.monitor(), c: await make.channel() }),
    op: ({ m, c }) => api.put(`/monitors/${m}/channels`, { channelIds: [c] }), del: ({ c }) => api.delete(`/channels/${c}`) },
  { name: 'createMaintenanceWindow vs deleteMonitor', refusal: 'invalid_field', setup: async () => ({ m: await make.monitor() }),
    op: ({ m }) => api.post('/maintenance', { title: 't', workspaceId: owner.workspaceId, monitorIds: [m], startsAt: later(1), endsAt: later(2) }),
    del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'createEscalationPolicy vs deleteMonitor', setup: async () => ({ m: await make.monitor(), c: await make.channel() }),
    op: ({ m, c }) => api.post('/on-call/escalation-policies', { name: 'e', steps: [{ afterMinutes: 0, targetType: 'channel', targetId: c }], monitorIds: [m] }),
    del: ({ m }) => api.delete(`/monitors/${m}`) },
  { name: 'createEscalationPolicy vs deleteSchedule', setup: async () => ({ s: await make.schedule() }),
    op: ({ s }) => api.post('/on-call/escalation-policies', { name: 'e', steps: [{ afterMinutes: 0, targetType: 'schedule', targetId: s }] }),
    del: ({ s }) => api.delete(`/on-call/schedules/${s}`) },

  // Status pages.
  { name: 'addStatusPageComponent vs deleteStatusPage', setup: async () => ({ p: await make.page(), m: await make.monitor() }),
    op: ({ p, m }) => api.post(`/status-pages/${p}/components`, { monitorId: m }), del: ({ p }) => api.delete(`/status-pages/${p}`) },
  { name: 'removeStatusPageComponent vs deleteMonitor', setup: async () => {
    const ids = { p: await make.page(), m: await make.monitor() };
    data('component', await api.post(`/status-pages/${ids.p}/components`, { monitorId: ids.m }));
    return ids;
  }, op: ({ p, m }) => api.delete(`/status-pages/${p}/components?component=${m}`), del: ({ m }) => api.delete(`/monitors/${m}`) },

  // Channels of error projects and analytics sites, and channels themselves.
  { name: 'setErrorProjectChannels vs deleteChannel', refusal: 'unknown_channel', setup: async () => ({ p: await make.project(), c: await make.channel() }),
    op: ({ p, c }) => api.put(`/errors/projects/${p}/channels`, { channelIds: [c] }), del: ({ c }) => api.delete(`/channels/${c}`) },
  { name: 'updateErrorProject vs deleteErrorProject', setup: async () => ({ p: await make.project() }),
    op: ({ p }) => api.patch(`/errors/projects/${p}`, { name: `e ${uniq()}` }), del: ({ p }) => api.delete(`/errors/projects/${p}`) },
  { name: 'setAnalyticsSiteChannels vs deleteAnalyticsSite', setup: async () => ({ s: await make.site(), c: await make.channel() }),
    op: ({ s, c }) => api.put(`/analytics/${s}/channels`, { channelIds: [c] }), del: ({ s }) => api.delete(`/analytics/${s}`) },
  { name: 'setAnalyticsSiteChannels vs deleteChannel', refusal: 'unknown_channel', setup: async () => ({ s: await make.site(), c: await make.channel() }),
    op: ({ s, c }) => api.put(`/analytics/${s}/channels`, { channelIds: [c] }), del: ({ c }) => api.delete(`/channels/${c}`) },
  { name: 'updateAnalyticsSite vs deleteAnalyticsSite', setup: async () => ({ s: await make.site() }),
    op: ({ s }) => api.patch(`/analytics/${s}`, { name: `s ${uniq()}` }), del: ({ s }) => api.delete(`/analytics/${s}`) },
  { name: 'updateChannel vs deleteChannel', setup: async () => ({ c: await make.channel() }),
    op: ({ c }) => api.patch(`/channels/${c}`, { enabled: false }), del: ({ c }) => api.delete(`/channels/${c}`) },
  { name: 'testChannel vs deleteChannel', setup: async () => ({ c: await make.channel() }),
    op: ({ c }) => api.post(`/channels/${c}/test`), del: ({ c }) => api.delete(`/channels/${c}`) },

  // Workspaces' children.
  { name: 'updateWorkspace vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.patch(`/workspaces/${w}`, { name: `w ${uniq()}` }), del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'createStatusPage vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/status-pages', { name: `p ${uniq()}`, workspaceId: w }), del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'createChannel vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/channels', { kind: 'webhook', name: 'c', target: 'http://127.0.0.1:9/hook', workspaceId: w }), del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'createErrorProject vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/errors/projects', { name: 'e', workspaceId: w }), del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'createAnalyticsSite vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/analytics', { domain: `s${uniq()}.example.test`, workspaceId: w }), del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'createMaintenanceWindow vs deleteWorkspace', refusal: 'invalid_field', setup: async () => {
    const w = await make.workspace();
    return { w, m: await make.monitor(w) };
  }, op: ({ w, m }) => api.post('/maintenance', { title: 't', workspaceId: w, monitorIds: [m], startsAt: later(1), endsAt: later(2) }),
  del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'enrollAgent vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/agents', { name: 'a', workspaceId: w }), del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'createSchedule vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/on-call/schedules', { name: 's', shiftLengthHours: 24, handoffTime: '09:00', participantIds: [owner.userId], workspaceId: w }),
    del: ({ w }) => api.delete(`/workspaces/${w}`) },
  { name: 'createApiKey vs deleteWorkspace', setup: async () => ({ w: await make.workspace() }),
    op: ({ w }) => api.post('/api-keys', { name: 'k', workspaceIds: [w] }), del: ({ w }) => api.delete(`/workspaces/${w}`) },

  // Members.
  { name: 'updateMember vs removeMember', setup: async () => ({ m: await make.member() }),
    op: ({ m }) => api.patch(`/members/${m}`, { role: 'viewer' }), del: ({ m }) => api.delete(`/members/${m}`) },
];

/** Why an answer breaks the rule (2xx, or 404/409 in the error shape), or null when it keeps it. */
function problem(r: ApiResponse, refusal?: string): string | null {
  if (r.status >= 200 && r.status < 300) return null;
  if (r.status === 400 && refusal && r.body?.code === refusal) return null;
  if (r.status !== 404 && r.status !== 409) return `status ${r.status}`;
  const b = r.body;
  const shaped = b && typeof b.error === 'string' && typeof b.code === 'string' && b.vars && typeof b.vars === 'object' && 'details' in b;
  if (!shaped) return 'not the error shape';
  if (b.code === 'conflict_retry' && !/^\d+$/.test(r.headers.get('retry-after') ?? '')) return 'conflict_retry without Retry-After';
  return null;
}

test('every create or update racing a delete of what it hangs from answers 2xx, 404 or 409, never 5xx', async () => {
  const failures: string[] = [];
  const seen = new Map<string, Map<string, number>>();
  for (const pair of PAIRS) {
    const tally = new Map<string, number>();
    seen.set(pair.name, tally);
    const rounds = pair.listed ? PAIR_ROUNDS : ROUNDS;
    for (let round = 0; round < rounds; round++) {
      const ids = await pair.setup();
      // Alternate which request leaves first, so each side wins some rounds.
      const [a, b] = round % 2 === 0 ? await Promise.all([pair.op(ids), pair.del(ids)]) : (await Promise.all([pair.del(ids), pair.op(ids)])).reverse();
      for (const [side, r] of [['op', a], ['delete', b]] as const) {
        const key = `${side} ${r.status}${r.status >= 400 ? ` ${r.body?.code}` : ''}`;
        tally.set(key, (tally.get(key) ?? 0) + 1);
        const why = problem(r, side === 'op' ? pair.refusal : undefined);
        if (why) failures.push(`${pair.name}, round ${round}, ${side}: ${why}: ${JSON.stringify(r.body).slice(0, 300)}`);
      }
    }
  }
  if (process.env.RACE_VERBOSE) console.log([...seen].map(([k, v]) => `${k}: ${[...v].map(([s, c]) => `${s}×${c}`).join(', ')}`).join('\n'));
  expect(failures).toEqual([]);
}, 240_000);

test('a write whose parent is gone names it: a 404 of the parent, not a foreign-key failure', async () => {
  // The parent deleted before the write: the domain's own checks answer, in the same words as the lock inside the write.
  const w = await make.workspace();
  data('delete', await api.delete(`/workspaces/${w}`));
  const r = await api.post('/monitors', { name: 'm', kind: 'http', workspaceId: w, config: JSON.stringify({ url: 'https://example.test/' }) });
  expect(r.status).toBe(404);
  expect(r.body).toMatchObject({ code: 'not_found', vars: { resource: 'workspace' }, details: { field: 'workspaceId' } });
  const h = await make.host();
  const m = await make.monitor();
  data('delete', await api.delete(`/monitors/${m}`));
  const link = await api.post(`/hosts/${h}/monitors`, { monitorId: m });
  expect(link.status).toBe(404);
  expect(link.body).toMatchObject({ code: 'not_found', vars: { resource: 'monitor' }, details: { field: 'monitorId' } });
});

describe('a transaction of the API that loses a deadlock', () => {
  const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
  // The handle the runner gives handlers (src/db/retry.ts).
  const apiDb = () => withTransactionRetries(srv.db);

  test('is run again, and answers as the next attempt does', async () => {
    let attempts = 0;
    const result = await apiDb().transaction().execute(async (tx) => {
      attempts++;
      await tx.updateTable('workspaces').set({ client_reference: `attempt ${attempts}` }).where('id', '=', owner.workspaceId).execute();
      if (attempts === 1) throw deadlock();
      return 'second';
    });
    expect({ result, attempts }).toEqual({ result: 'second', attempts: 2 });
    // The first attempt left nothing behind.
    const ws = await srv.db.selectFrom('workspaces').select('client_reference').where('id', '=', owner.workspaceId).executeTakeFirstOrThrow();
    expect(ws.client_reference).toBe('attempt 2');
  });

  test('losing every time is 409 conflict_retry with Retry-After', async () => {
    let attempts = 0;
    const failed = await apiDb().transaction().execute(async () => { attempts++; throw deadlock(); }).catch((e: unknown) => e);
    expect(attempts).toBe(3);
    const answer = asApiError(failed);
    expect(answer.status).toBe(409);
    expect(answer.code).toBe('conflict_retry');
    expect(answer.headers['Retry-After']).toMatch(/^\d+$/);
    // Other failures are not run again.
    attempts = 0;
    await apiDb().transaction().execute(async () => { attempts++; throw new Error('no'); }).catch(() => undefined);
    expect(attempts).toBe(1);
  });

  test('a real deadlock between two transactions: PostgreSQL aborts one, it runs again, both succeed', async () => {
    const [a, b] = [await make.workspace(), await make.workspace()];
    let attempts = 0;
    // Each takes its first row, then waits until the other holds its own: the second lock closes the cycle (first attempts only).
    let held = 0;
    const bothHeld = new Promise<void>((resolve) => { const t = setInterval(() => { if (held >= 2) { clearInterval(t); resolve(); } }, 10); });
    const op = (first: string, second: string) => apiDb().transaction().execute(async (tx) => {
      const attempt = ++attempts;
      await sql`select id from workspaces where id = ${first} for update`.execute(tx);
      if (attempt <= 2) { held++; await bothHeld; }
      await sql`select id from workspaces where id = ${second} for update`.execute(tx);
      return 'done';
    });
    expect(await Promise.all([op(a, b), op(b, a)])).toEqual(['done', 'done']);
    expect(attempts).toBe(3);
  }, 30_000);

  test('the handle is the same database otherwise: its read cache and change clock are the root\'s', () => {
    expect(clockOf(apiDb())).toBe(clockOf(srv.db));
    expect(clockOf(apiDb())).not.toBeNull();
  });
});

describe('two servers started at once on an empty database', () => {
  let children: ChildServer[] = [];
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await drop?.();
  });

  test('both come up, and exactly one creates the first organisation and prints its key', async () => {
    const db = await freshDatabase();
    drop = db.drop;
    const env = { DATABASE_URL: db.url, WORKER: 'false', RATE_LIMIT_STORE: 'postgres', MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
    const started = await Promise.allSettled([startChild(env), startChild(env)]);
    children = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    expect(started.map((s) => (s.status === 'rejected' ? String(s.reason).slice(0, 500) : 'up'))).toEqual(['up', 'up']);
    const keys = children.map((c) => c.bootstrapKey).filter((k) => k !== null);
    expect(keys).toHaveLength(1);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>('select count(*)::int as n from organizations');
      expect(rows[0].n).toBe(1);
    } finally {
      await client.end();
    }
    // The printed key works on both.
    for (const c of children) {
      const res = await fetch(`${c.url}/api/v1/me`, { headers: { authorization: `Bearer ${keys[0]}` } });
      expect(res.status).toBe(200);
    }
  }, 120_000);
});
