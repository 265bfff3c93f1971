/**
 * Data export (GET /export/{entity}, GET /export): every entity in CSV and
 * JSON with its columns and only the caller's rows (organisation and
 * workspace confinement), bom, from/to, the 92-day limit of hourly series,
 * 404/403, the zip with its manifest (read with `unzip`), a viewer's zip,
 * the shared 6-an-hour limit, protobuf and Connect answers, and that no
 * secret ever appears in any byte of any export.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { fromBinary } from '@bufbuild/protobuf';
import { ExportEntityResponseSchema } from '../gen/proto/vigil/v1/export_pb';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok, until } from './support/expect';
import { tempDir } from './support/child';

const COLUMNS: Record<string, string[]> = {
  monitors: ['id', 'name', 'kind', 'workspaceId', 'workspaceName', 'status', 'enabled', 'intervalSeconds', 'confirmations', 'tags',
    'dependsOn', 'probeId', 'hostIds', 'statusSince', 'lastCheckedAt', 'uptime24h', 'uptime30d', 'createdAt', 'updatedAt'],
  hosts: ['id', 'name', 'provider', 'address', 'notes', 'monitorIds', 'createdAt'],
  'status-pages': ['id', 'name', 'slug', 'workspaceId', 'visibility', 'hasPassword', 'customDomain', 'domainVerifiedAt', 'headline', 'description',
    'logoUrl', 'customCss', 'themeAccent', 'language', 'historyDays', 'showResponseTimes', 'showIncidentHistory', 'subscribersEnabled',
    'hideServiceBranding', 'groupByHost', 'componentMonitorIds', 'createdAt', 'updatedAt'],
  'notification-channels': ['id', 'name', 'kind', 'workspaceId', 'target', 'enabled', 'confirmed', 'ownerMemberId', 'createdAt'],
  members: ['id', 'userId', 'email', 'name', 'role', 'workspaceIds', 'createdAt', 'lastSeenAt'],
  incidents: ['id', 'workspaceId', 'monitorId', 'monitorName', 'analyticsSiteId', 'title', 'cause', 'severity', 'status', 'rootIncidentId',
    'startedAt', 'acknowledgedAt', 'resolvedAt', 'durationSeconds', 'hasPostmortem'],
  'incident-events': ['id', 'incidentId', 'kind', 'at', 'actorType', 'actorId', 'actorName', 'message', 'public', 'fromStatus', 'toStatus'],
  postmortems: ['incidentId', 'incidentTitle', 'workspaceId', 'authorName', 'updatedAt', 'body'],
  'audit-log': ['id', 'at', 'action', 'resourceType', 'resourceId', 'workspaceId', 'actorType', 'actorId', 'actorName', 'actorUserId', 'actorUserEmail', 'actorUserName', 'changes'],
  'error-issues': ['id', 'projectId', 'projectName', 'title', 'type', 'value', 'culprit', 'level', 'status', 'timesSeen', 'usersSeen',
    'firstSeenAt', 'lastSeenAt', 'firstRelease', 'lastRelease', 'resolvedInRelease', 'ignoredUntil'],
  'uptime-daily': ['monitorId', 'monitorName', 'day', 'checks', 'failures', 'degraded', 'uptime', 'downtimeSeconds', 'avgResponseTimeMs'],
  'uptime-hourly': ['monitorId', 'monitorName', 'hour', 'checks', 'failures', 'degraded', 'uptime', 'avgResponseTimeMs', 'readings'],
  'analytics-hourly': ['siteId', 'siteDomain', 'hour', 'dimension', 'value', 'visitors', 'pageviews', 'events', 'visits', 'bounces', 'durationSeconds'],
};
const ENTITIES = Object.keys(COLUMNS);

const SECRET = {
  header: 'Bearer hdr-EXPORT-s3cr3t-1a2b', body: 'body-EXPORT-s3cr3t-3c4d', urlPassword: 'urlpwEXPORT5e6f', urlToken: 'urltokEXPORT7g8h', community: 'community-EXPORT-7a8b',
  slack: 'https://hooks.slack.com/services/T0EXPORT/B0EXPORT/slackEXPORTs3cr3t9c', webhook: 'https://hooks.export-test.example/in?token=whqEXPORTs3cr3t',
  legacy: 'https://hooks.slack.com/services/T0LEGACY/B0LEGACY/legacyEXPORTs3cr3t', passwordHash: 'scrypt$16384$8$1$c2FsdEVYUE9SVA$aGFzaEVYUE9SVHNlY3JldA',
  pagePassword: 'page-EXPORT-pass-123', lastMessage: 'raw-check-result-EXPORT-msg',
};

const H = 3_600_000;
const D = 24 * H;
const now = Date.now();
const hourAgo = (n: number) => new Date(Math.floor(now / H) * H - n * H);
const dayAgo = (n: number) => new Date(now - n * D).toISOString().slice(0, 10);

/** RFC 4180 rows (quoted fields with "" and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; } else field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  return rows;
}

interface Download { status: number; headers: Headers; bytes: Buffer }

let srv: TestServer;
let db: pg.Client;
const fixture = {} as {
  orgId: string; owner: string; w1: string; w2: string; admin: string; viewer: string; incidentOnly: string; billingOnly: string;
  mHttp: string; mSnmp: string; mBeat: string; host: string; page: string; incidents: string[]; siteW1: string; siteW2: string;
  projW1: string; projW2: string; issues: string[]; tokens: string[]; webhookSecret: string; otherOrg: string; otherMonitor: string;
};

async function download(key: string, p: string, headers: Record<string, string> = {}): Promise<Download> {
  const res = await fetch(`${srv.url}/api/v1${p}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** An entity as CSV (header, rows) and JSON, checked to agree. */
async function both(key: string, entity: string, query = ''): Promise<{ header: string[]; csv: string[][]; json: Record<string, any>[] }> {
  const csv = await download(key, `/export/${entity}${query ? `?${query}` : ''}`);
  expect({ entity, status: csv.status, body: csv.status === 200 ? '' : csv.bytes.toString() }).toEqual({ entity, status: 200, body: '' });
  expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
  expect(csv.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="vigil-${entity}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`));
  const [header, ...rows] = parseCsv(csv.bytes.toString('utf8'));
  const js = await download(key, `/export/${entity}?format=json${query ? `&${query}` : ''}`);
  expect(js.status).toBe(200);
  expect(js.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const json = JSON.parse(js.bytes.toString('utf8'));
  expect(json).toHaveLength(rows.length);
  for (const r of json) expect(Object.keys(r)).toEqual(header);
  return { header, csv: rows, json };
}

const ids = (rows: Record<string, any>[], key = 'id') => rows.map((r) => r[key]).sort();

function unzip(bytes: Buffer): Map<string, Buffer> {
  const dir = tempDir('vigil-export-');
  const file = path.join(dir, 'x.zip');
  fs.writeFileSync(file, bytes);
  try {
    const names = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
    return new Map(names.map((n) => [n, execFileSync('unzip', ['-p', file, n], { maxBuffer: 1 << 28 })]));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function seed(): Promise<void> {
  const o = await srv.org({ plan: 'business' });
  const api = srv.api(o.apiKey);
  Object.assign(fixture, { orgId: o.organizationId, owner: o.apiKey, w1: o.workspaceId, tokens: [o.apiKey] });
  fixture.w2 = ok('createWorkspace', await api.post('/workspaces', { name: 'Export W2' }), 201).id;
  const monitor = async (a: ApiClient, body: Record<string, unknown>) => ok('createMonitor', await a.post('/monitors', body), 201).id as string;
  fixture.mHttp = await monitor(api, { name: 'Export HTTP', kind: 'http', workspaceId: fixture.w1, tags: ['web'], config: JSON.stringify({
    url: `https://exporter:${SECRET.urlPassword}@export-target.example/health?region=eu&api_key=${SECRET.urlToken}`, method: 'POST', headers: { Authorization: SECRET.header }, body: SECRET.body,
  }) });
  fixture.mSnmp = await monitor(api, { name: 'Export SNMP', kind: 'snmp', workspaceId: fixture.w2, config: JSON.stringify({
    host: 'snmp.export-test.example', community: SECRET.community, oids: [{ oid: '1.3.6.1.2.1.1.3.0', name: 'uptime' }],
  }) });
  fixture.mBeat = await monitor(api, { name: 'Export beat', kind: 'heartbeat', workspaceId: fixture.w1, config: '{}' });
  const push = ok('getMonitorPushUrl', await api.get(`/monitors/${fixture.mBeat}/push-url`));
  fixture.tokens.push(String(push.url).split('/').pop()!);
  fixture.host = ok('createHost', await api.post('/hosts', { name: 'export-host.example', notes: 'rack 4' }), 201).id;
  ok('setMonitorHosts', await api.put(`/monitors/${fixture.mHttp}/hosts`, { hostIds: [fixture.host] }));
  ok('setMonitorHosts', await api.put(`/monitors/${fixture.mSnmp}/hosts`, { hostIds: [fixture.host] }));
  fixture.page = ok('createStatusPage', await api.post('/status-pages', { name: 'Export page', workspaceId: fixture.w1 }), 201).id;
  ok('updateStatusPage', await api.patch(`/status-pages/${fixture.page}`, { password: SECRET.pagePassword, headline: 'All good' }));
  ok('addStatusPageComponent', await api.post(`/status-pages/${fixture.page}/components`, { monitorId: fixture.mHttp }), 201);
  const hook = ok('createChannel', await api.post('/channels', { kind: 'webhook', name: 'Export hook', target: SECRET.webhook }), 201);
  fixture.webhookSecret = hook.secret;
  ok('createChannel', await api.post('/channels', { kind: 'slack', name: 'Export slack W2', target: SECRET.slack, workspaceId: fixture.w2 }), 201);
  fixture.siteW1 = ok('createAnalyticsSite', await api.post('/analytics', { domain: 'export-w1.example', workspaceId: fixture.w1 }), 201).id;
  fixture.siteW2 = ok('createAnalyticsSite', await api.post('/analytics', { domain: 'export-w2.example', workspaceId: fixture.w2 }), 201).id;
  fixture.projW1 = ok('createErrorProject', await api.post('/errors/projects', { name: 'Export app', workspaceId: fixture.w1 }), 201).id;
  fixture.projW2 = ok('createErrorProject', await api.post('/errors/projects', { name: 'Export app W2', workspaceId: fixture.w2 }), 201).id;
  const admin = await srv.member(o.organizationId, 'admin', [fixture.w1]);
  const viewer = await srv.member(o.organizationId, 'viewer');
  Object.assign(fixture, { admin: admin.apiKey, viewer: viewer.apiKey });
  const scoped = async (scopes: string[]) => ok('createApiKey', await api.post('/api-keys', { name: scopes.join(' '), scopes }), 201).token as string;
  fixture.incidentOnly = await scoped(['incident:read']);
  fixture.billingOnly = await scoped(['billing:read']);
  fixture.tokens.push(admin.apiKey, viewer.apiKey, fixture.incidentOnly, fixture.billingOnly);

  // What only the engine, ingestion and people's own actions write: in SQL.
  await db.query(`update users set password_hash = $1 where id in (select user_id from memberships where organization_id = $2)`, [SECRET.passwordHash, o.organizationId]);
  await db.query(`update monitors set last_message = $1, last_check_detail = $2 where organization_id = $3`, [SECRET.lastMessage, JSON.stringify({ findings: [{ message: SECRET.lastMessage }] }), o.organizationId]);
  await db.query(`insert into notification_channels (id, organization_id, kind, name, target) values ('ch_legacy_export', $1, 'slack', 'Legacy slack', $2)`, [o.organizationId, SECRET.legacy]);
  const inc = [['inc_exp_1', fixture.w1, fixture.mHttp, 30], ['inc_exp_2', fixture.w2, fixture.mSnmp, 20], ['inc_exp_3', fixture.w1, fixture.mHttp, 10]] as const;
  for (const [id, ws, mon, days] of inc) {
    await db.query(`insert into incidents (id, organization_id, workspace_id, monitor_id, title, cause, severity, status, started_at, resolved_at, postmortem_body, postmortem_author, postmortem_updated_at)
      values ($1, $2, $3, $4, $5, 'timeout', 'critical', 'resolved', $6, $7, $8, 'Ann', $7)`,
    [id, o.organizationId, ws, mon, `Down ${id}`, new Date(now - days * D), new Date(now - days * D + H), id === 'inc_exp_2' ? null : `Postmortem of ${id}, "quoted", with a comma`]);
    await db.query(`insert into incident_events (id, incident_id, organization_id, kind, at, message, to_status) values ($1, $2, $3, 'opened', $4, 'it broke', 'open')`,
      [`iev_${id}`, id, o.organizationId, new Date(now - days * D)]);
  }
  fixture.incidents = inc.map((i) => i[0]);
  for (const [mon, n] of [[fixture.mHttp, 3], [fixture.mSnmp, 2]] as const) {
    for (let i = 1; i <= n; i++) {
      await db.query(`insert into rollup_hourly (monitor_id, hour, checks, failures, degraded, response_sum_ms, response_count, readings) values ($1, $2, 12, 1, 0, 1200, 12, $3)`,
        [mon, hourAgo(i), mon === fixture.mSnmp ? JSON.stringify({ uptime: { sum: 10, count: 1, min: 10, max: 10, unit: 's' } }) : null]);
      await db.query(`insert into rollup_daily (monitor_id, day, checks, failures, degraded, downtime_seconds, response_sum_ms, response_count) values ($1, $2, 288, 2, 1, 600, 28800, 288)`,
        [mon, dayAgo(i)]);
    }
  }
  // Older than the hourly default window (92 days).
  await db.query(`insert into rollup_hourly (monitor_id, hour, checks, failures, degraded, response_sum_ms, response_count) values ($1, $2, 12, 0, 0, 100, 12)`, [fixture.mHttp, hourAgo(100 * 24)]);
  for (const [site, n] of [[fixture.siteW1, 2], [fixture.siteW2, 1]] as const) {
    for (let i = 1; i <= n; i++) {
      await db.query(`insert into analytics_hourly (site_id, hour, dimension, value, visitors, pageviews) values ($1, $2, '', '', 5, 9), ($1, $2, 'path', '/a,"b"', 3, 4)`, [site, hourAgo(i)]);
    }
  }
  fixture.issues = ['iss_exp_1', 'iss_exp_2'];
  for (const [id, proj] of [['iss_exp_1', fixture.projW1], ['iss_exp_2', fixture.projW2]]) {
    await db.query(`insert into error_issues (id, project_id, organization_id, fingerprint, title, type, value, level, times_seen, first_seen_at, last_seen_at)
      values ($1, $2, $3, $1, 'TypeError: x is undefined', 'TypeError', 'x is undefined', 'error', 1000, $4, $5)`, [id, proj, o.organizationId, new Date(now - 5 * D), new Date(now - D)]);
  }

  // Another organisation, never in these exports.
  const other = await srv.org({ plan: 'business', name: 'OTHER-ORG' });
  fixture.otherOrg = other.organizationId;
  fixture.otherMonitor = await monitor(srv.api(other.apiKey), { name: 'OTHER-ORG monitor', kind: 'http', workspaceId: other.workspaceId, config: JSON.stringify({ url: 'https://other.example/' }) });
  await db.query(`insert into rollup_hourly (monitor_id, hour, checks, failures, degraded, response_sum_ms, response_count) values ($1, $2, 1, 0, 0, 1, 1)`, [fixture.otherMonitor, hourAgo(1)]);
}

beforeAll(async () => {
  srv = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', RATE_LIMIT_EXPORT: '100000' });
  db = new pg.Client({ connectionString: srv.databaseUrl });
  await db.connect();
  await seed();
}, 60_000);
afterAll(async () => {
  await db.end();
  await srv.close();
});

describe('one entity', () => {
  it('exports every entity in CSV and JSON with its columns, rows of the caller only', async () => {
    const seen: Record<string, Record<string, any>[]> = {};
    for (const entity of ENTITIES) {
      const { header, json } = await both(fixture.owner, entity);
      expect({ entity, header }).toEqual({ entity, header: COLUMNS[entity] });
      seen[entity] = json;
    }
    expect(ids(seen.monitors)).toEqual([fixture.mHttp, fixture.mSnmp, fixture.mBeat].sort());
    expect(ids(seen.hosts)).toEqual([fixture.host]);
    expect(seen.hosts[0].monitorIds).toEqual([fixture.mHttp, fixture.mSnmp].sort());
    expect(seen['status-pages']).toEqual([expect.objectContaining({ id: fixture.page, hasPassword: true, headline: 'All good', componentMonitorIds: [fixture.mHttp] })]);
    expect(seen['notification-channels'].map((c) => c.name).sort()).toEqual(['Export hook', 'Export slack W2', 'Legacy slack']);
    expect(seen.members.map((m) => m.role).sort()).toEqual(['admin', 'owner', 'viewer']);
    expect(ids(seen.incidents)).toEqual(fixture.incidents);
    expect(ids(seen['incident-events'], 'incidentId')).toEqual(fixture.incidents);
    expect(ids(seen.postmortems, 'incidentId')).toEqual(['inc_exp_1', 'inc_exp_3']);
    expect(seen.postmortems[0].body).toBe('Postmortem of inc_exp_1, "quoted", with a comma');
    expect(seen['audit-log'].map((a) => a.action)).toEqual(expect.arrayContaining(['monitor.created', 'status_page.created']));
    expect(ids(seen['error-issues'])).toEqual(fixture.issues);
    expect(seen['error-issues'][0]).toMatchObject({ timesSeen: 1000, status: 'unresolved', projectName: 'Export app' });
    expect(seen['uptime-daily']).toHaveLength(5);
    expect(seen['uptime-hourly']).toHaveLength(5); // the row of 100 days ago is outside the default 92 days
    expect(seen['uptime-hourly'][0]).toMatchObject({ checks: 12, failures: 1, uptime: 91.667, avgResponseTimeMs: 100 });
    expect(seen['analytics-hourly']).toHaveLength(6);
    // Nothing of the other organisation, under any entity.
    for (const [entity, rows] of Object.entries(seen)) expect({ entity, leak: JSON.stringify(rows).match(/OTHER-ORG|other\.example/) }).toEqual({ entity, leak: null });
    expect(JSON.stringify(seen)).not.toContain(fixture.otherMonitor);
  });

  it('writes CSV values as text: empty for null, true/false, lists and objects as JSON', async () => {
    const { csv } = await both(fixture.owner, 'monitors');
    const http = csv.find((r) => r[0] === fixture.mHttp)!;
    const col = (name: string) => http[COLUMNS.monitors.indexOf(name)];
    expect(col('enabled')).toBe('true');
    expect(col('probeId')).toBe('');
    expect(JSON.parse(col('tags'))).toEqual(['web']);
  });

  it('exports no monitor config (test/export-monitor-config.test.ts has the rest), channels with masked targets', async () => {
    const { json: mons } = await both(fixture.owner, 'monitors');
    for (const m of mons) expect(m).not.toHaveProperty('config');
    const all = JSON.stringify(mons);
    for (const value of ['export-target.example', 'snmp.export-test.example', '/health', 'region=eu']) expect(all).not.toContain(value);
    const { json: chans } = await both(fixture.owner, 'notification-channels');
    const target = (name: string) => chans.find((c) => c.name === name)!.target;
    expect(target('Export hook')).toBe('https://hooks.export-test.example/…');
    expect(target('Export slack W2')).not.toContain('slackEXPORT');
    expect(target('Legacy slack')).not.toContain('legacyEXPORT');
  });

  it('confines a key to its workspaces', async () => {
    const rows = async (entity: string) => (await both(fixture.admin, entity)).json;
    expect(ids(await rows('monitors'))).toEqual([fixture.mHttp, fixture.mBeat].sort());
    expect((await rows('hosts'))[0].monitorIds).toEqual([fixture.mHttp]);
    expect(ids(await rows('incidents'))).toEqual(['inc_exp_1', 'inc_exp_3']);
    expect(ids(await rows('incident-events'), 'incidentId')).toEqual(['inc_exp_1', 'inc_exp_3']);
    expect(ids(await rows('error-issues'))).toEqual(['iss_exp_1']);
    expect(new Set((await rows('uptime-hourly')).map((r) => r.monitorId))).toEqual(new Set([fixture.mHttp]));
    expect(new Set((await rows('uptime-daily')).map((r) => r.monitorId))).toEqual(new Set([fixture.mHttp]));
    expect(new Set((await rows('analytics-hourly')).map((r) => r.siteId))).toEqual(new Set([fixture.siteW1]));
    expect((await rows('notification-channels')).map((c) => c.name).sort()).toEqual(['Export hook', 'Legacy slack']);
    const audit = await rows('audit-log');
    expect(audit.length).toBeGreaterThan(0);
    for (const a of audit) expect(a.workspaceId).toBe(fixture.w1);
  });

  it('prefixes CSV with a byte order mark only when asked', async () => {
    const plain = await download(fixture.owner, '/export/hosts');
    const bom = await download(fixture.owner, '/export/hosts?bom=true');
    expect([...plain.bytes.subarray(0, 3)]).toEqual([...Buffer.from('id,')]);
    expect([...bom.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bom.bytes.subarray(3).equals(plain.bytes)).toBe(true);
    const json = await download(fixture.owner, '/export/hosts?format=json&bom=true');
    expect(json.bytes[0]).toBe('['.charCodeAt(0));
  });

  it('bounds rows by from (included) and to (excluded)', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const mid = await both(fixture.owner, 'incidents', `from=${iso(now - 25 * D)}&to=${iso(now - 15 * D)}`);
    expect(ids(mid.json)).toEqual(['inc_exp_2']);
    const exact = await both(fixture.owner, 'incidents', `from=${iso(now - 20 * D)}&to=${iso(now - 10 * D)}`);
    expect(ids(exact.json)).toEqual(['inc_exp_2']);
    const hours = await both(fixture.owner, 'uptime-hourly', `from=${iso(hourAgo(2).getTime() + 60_000)}`);
    // Each hour that overlaps the window: the one holding `from` and the last one.
    expect(new Set(hours.json.map((r) => r.hour))).toEqual(new Set([hourAgo(2).toISOString(), hourAgo(1).toISOString()]));
    const days = await both(fixture.owner, 'uptime-daily', `to=${iso(Date.parse(`${dayAgo(1)}T00:00:00Z`))}`);
    expect(new Set(days.json.map((r) => r.day))).toEqual(new Set([dayAgo(2), dayAgo(3)]));
    const r = await download(fixture.owner, `/export/incidents?from=${iso(now - D)}&to=${iso(now - 2 * D)}`);
    expect(r.status).toBe(400);
  });

  it('limits hourly series to 92 days a request', async () => {
    const iso = (d: Date) => d.toISOString();
    const from = hourAgo(100 * 24 + 1);
    const to = new Date(from.getTime() + 92 * D);
    const exact = await both(fixture.owner, 'uptime-hourly', `from=${iso(from)}&to=${iso(to)}`);
    expect(exact.json.map((r) => r.hour)).toEqual([hourAgo(100 * 24).toISOString()]);
    for (const entity of ['uptime-hourly', 'analytics-hourly']) {
      const wide = await download(fixture.owner, `/export/${entity}?from=${iso(from)}&to=${iso(new Date(to.getTime() + 1000))}`);
      expect(wide.status).toBe(400);
      expect(JSON.parse(wide.bytes.toString())).toMatchObject({ code: 'export_window_too_wide', vars: { maxDays: '92', entity } });
    }
    // Other entities take any window.
    expect((await download(fixture.owner, `/export/incidents?from=2000-01-01T00:00:00Z`)).status).toBe(200);
    const zip = await download(fixture.owner, `/export?from=2000-01-01T00:00:00Z`);
    expect(zip.status).toBe(400);
    expect(JSON.parse(zip.bytes.toString()).code).toBe('export_window_too_wide');
  });

  it('answers 404 for an unknown entity and 403 naming the permission it lacks', async () => {
    const unknown = await download(fixture.owner, '/export/check-results');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.bytes.toString())).toMatchObject({ code: 'not_found', details: { field: 'entity' } });
    const denied = await download(fixture.incidentOnly, '/export/monitors');
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.bytes.toString())).toMatchObject({ code: 'forbidden', vars: { permission: 'monitor:read' } });
    expect((await download(fixture.incidentOnly, '/export/incidents')).status).toBe(200);
    const auditViewer = await download(fixture.viewer, '/export/audit-log');
    expect(JSON.parse(auditViewer.bytes.toString())).toMatchObject({ code: 'forbidden', vars: { permission: 'audit_log:read' } });
    expect((await download(fixture.billingOnly, '/export')).status).toBe(403);
  });

  it('carries the file in the message for protobuf and Connect callers', async () => {
    const csv = (await download(fixture.owner, '/export/hosts')).bytes.toString();
    const pb = await download(fixture.owner, '/export/hosts', { accept: 'application/x-protobuf' });
    expect(pb.headers.get('content-type')).toBe('application/x-protobuf');
    const msg = fromBinary(ExportEntityResponseSchema, pb.bytes);
    expect({ type: msg.contentType, name: msg.filename, text: Buffer.from(msg.content).toString() }).toEqual({ type: 'text/csv; charset=utf-8', name: expect.stringMatching(/^vigil-hosts-/), text: csv });
    const res = await fetch(`${srv.url}/rpc/vigil.v1.ExportService/ExportEntity`, {
      method: 'POST', headers: { authorization: `Bearer ${fixture.owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ entity: 'hosts', format: 'json' }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(JSON.parse(Buffer.from(body.content, 'base64').toString())).toEqual(JSON.parse((await download(fixture.owner, '/export/hosts?format=json')).bytes.toString()));
  });
});

describe('everything as a zip', () => {
  it('holds one file per entity and a manifest with row counts', async () => {
    const res = await download(fixture.owner, '/export?format=json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="vigil-export-\d{4}-\d{2}-\d{2}\.zip"$/);
    const files = unzip(res.bytes);
    expect([...files.keys()]).toEqual([...ENTITIES.map((e) => `${e}.json`), 'manifest.json']);
    const manifest = JSON.parse(files.get('manifest.json')!.toString());
    expect(manifest).toMatchObject({ organizationId: fixture.orgId, format: 'json', from: null, missing: [] });
    for (const entity of ENTITIES) {
      const rows = JSON.parse(files.get(`${entity}.json`)!.toString());
      const single = JSON.parse((await download(fixture.owner, `/export/${entity}?format=json`)).bytes.toString());
      expect({ entity, rows: rows.length }).toEqual({ entity, rows: single.length });
      expect(manifest.files.find((f: any) => f.entity === entity)).toMatchObject({ file: `${entity}.json`, rows: rows.length });
    }
    expect(manifest.files.find((f: any) => f.entity === 'uptime-hourly').from).not.toBeNull();
  });

  it("omits what a viewer cannot read and says why; CSV files with a BOM when asked", async () => {
    const files = unzip((await download(fixture.viewer, '/export?bom=true')).bytes);
    expect(files.has('audit-log.csv')).toBe(false);
    expect(files.has('monitors.csv')).toBe(true);
    expect([...files.get('monitors.csv')!.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const manifest = JSON.parse(files.get('manifest.json')!.toString());
    expect(manifest.missing).toEqual([{ entity: 'audit-log', reason: 'no_permission', permission: 'audit_log:read', message: expect.any(String) }]);
    expect(manifest.files).toHaveLength(ENTITIES.length - 1);
    const scoped = JSON.parse(unzip((await download(fixture.incidentOnly, '/export')).bytes).get('manifest.json')!.toString());
    expect(scoped.files.map((f: any) => f.entity)).toEqual(['incidents', 'incident-events', 'postmortems']);
    const pro = await srv.org({ plan: 'pro' });
    const proManifest = JSON.parse(unzip((await download(pro.apiKey, '/export')).bytes).get('manifest.json')!.toString());
    expect(proManifest.missing).toEqual([expect.objectContaining({ entity: 'audit-log', reason: 'not_in_plan' })]);
  });
});

it('streams from a cursor as the client reads, and gives the connection back when the client goes away', async () => {
  const o = await srv.org({ plan: 'business', name: 'Abandoning org' });
  const site = ok('createAnalyticsSite', await srv.api(o.apiKey).post('/analytics', { domain: 'export-abandon.example', workspaceId: o.workspaceId }), 201).id;
  // 2,000 hours × 100 values: 200,000 rows, far more than socket buffers hold.
  await db.query(`insert into analytics_hourly (site_id, hour, dimension, value, visitors, pageviews)
    select $1, $2::timestamptz - g * interval '1 hour', 'path', '/page-' || v, 1, 2 from generate_series(1, 2000) g, generate_series(1, 100) v`, [site, hourAgo(0)]);
  const exporting = async (state: string) => (await db.query(`select count(*)::int as n from pg_stat_activity
    where datname = current_database() and state = $1 and query like 'fetch forward %'`, [state])).rows[0].n as number;
  const abort = new AbortController();
  const res = await fetch(`${srv.url}/api/v1/export/analytics-hourly`, { headers: { authorization: `Bearer ${o.apiKey}`, 'accept-encoding': 'identity' }, signal: abort.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-length')).toBeNull();
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(Buffer.from(first.value!).toString().startsWith('siteId,siteDomain,hour')).toBe(true);
  // The client stopped reading: the server waits on the socket with its cursor open and fetches no more.
  await until('the export to wait for the client', async () => (await exporting('idle in transaction')) === 1);
  abort.abort();
  await until('the cursor and transaction to end', async () => (await exporting('idle in transaction')) + (await exporting('active')) === 0, 5000);
  // The same for a zip, abandoned in its analytics file.
  const zipAbort = new AbortController();
  const zip = await fetch(`${srv.url}/api/v1/export?format=json`, { headers: { authorization: `Bearer ${o.apiKey}` }, signal: zipAbort.signal });
  expect(zip.status).toBe(200);
  await zip.body!.getReader().read();
  await until('the zip to wait for the client', async () => (await exporting('idle in transaction')) === 1);
  zipAbort.abort();
  await until('the zip cursor and transaction to end', async () => (await exporting('idle in transaction')) + (await exporting('active')) === 0, 5000);
});

it('never exports a secret: no channel target or secret, heartbeat token, monitor credential, hash or check result', async () => {
  const blobs: Buffer[] = [];
  for (const entity of ENTITIES) {
    for (const format of ['csv', 'json']) blobs.push((await download(fixture.owner, `/export/${entity}?format=${format}`)).bytes);
  }
  for (const format of ['csv', 'json']) blobs.push(...unzip((await download(fixture.owner, `/export?format=${format}`)).bytes).values());
  const all = Buffer.concat(blobs).toString('utf8');
  expect(all).toContain(fixture.mHttp); // the exports are not empty
  const { rows } = await db.query(`select password_hash from status_pages where id = $1`, [fixture.page]);
  const forbidden = [
    SECRET.header, 'hdr-EXPORT', SECRET.body, SECRET.urlPassword, SECRET.urlToken, 'exporter@', SECRET.community, 'slackEXPORTs3cr3t', 'whqEXPORTs3cr3t', 'legacyEXPORTs3cr3t',
    SECRET.passwordHash, SECRET.pagePassword, rows[0].password_hash, SECRET.lastMessage, fixture.webhookSecret,
  ];
  for (const token of fixture.tokens) {
    const sha = createHash('sha256').update(token).digest();
    forbidden.push(token, sha.toString('hex'), sha.toString('base64'), sha.toString('base64url'));
  }
  for (const s of forbidden) expect({ secret: s, found: all.includes(s) }).toEqual({ secret: s, found: false });
});

it('allows 6 exports an hour per organisation, both routes together, then 429 with Retry-After', async () => {
  const limited = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  try {
    const a = await limited.org();
    const b = await limited.org();
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`${limited.url}/api/v1/export${i % 2 ? '' : '/monitors'}`, { headers: { authorization: `Bearer ${a.apiKey}` } });
      await r.arrayBuffer();
      expect(r.status).toBe(200);
    }
    for (const p of ['/export', '/export/hosts']) {
      const r = await fetch(`${limited.url}/api/v1${p}`, { headers: { authorization: `Bearer ${a.apiKey}` } });
      expect(r.status).toBe(429);
      expect((await r.json()).code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(3000);
    }
    // Per organisation: another one still exports.
    const other = await fetch(`${limited.url}/api/v1/export/monitors`, { headers: { authorization: `Bearer ${b.apiKey}` } });
    await other.arrayBuffer();
    expect(other.status).toBe(200);
  } finally {
    await limited.close();
  }
}, 60_000);
