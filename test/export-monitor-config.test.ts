import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ok, until } from './support/expect';
import { startDnsServer, type DnsServer } from './support/dns-server';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { stubLookup, type LookupStub } from './support/lookup-stub';
import { tempDir } from './support/child';

// Exports carry no monitor config (spec: "Monitor `config` is never returned
// by any read"; issue 24 item 9): not the config, and nothing read from it.
// Monitors of several kinds carry a marker in every config value (URL user,
// password, host, path, query, header, body, DNS name, resolver, SNMP host and
// community), run real checks against local targets so that the engine writes
// its own words about them (a DNS check's message names its record), and no
// byte of any export — each entity in CSV and JSON, the zip of each — holds
// any of them. Names under example.test resolve to loopback through a
// dns.lookup stub (support/lookup-stub.ts); every connection is to loopback.

const MARK = 'cfgmark';
const ENTITIES = ['monitors', 'hosts', 'status-pages', 'notification-channels', 'members', 'incidents', 'incident-events', 'postmortems',
  'audit-log', 'error-issues', 'uptime-daily', 'uptime-hourly', 'analytics-hourly'];

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let lookup: LookupStub;
let dns: DnsServer;
let target: http.Server;
let closedPort: number;
const ids: Record<string, string> = {};

async function download(p: string): Promise<Buffer> {
  const res = await fetch(`${server.url}/api/v1${p}`, { headers: { authorization: `Bearer ${org.apiKey}` } });
  expect({ p, status: res.status }).toEqual({ p, status: 200 });
  return Buffer.from(await res.arrayBuffer());
}

function unzip(bytes: Buffer): Buffer[] {
  const dir = tempDir('vigil-export-config-');
  const file = path.join(dir, 'x.zip');
  fs.writeFileSync(file, bytes);
  try {
    const names = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(names.length).toBe(ENTITIES.length + 1);
    return names.map((n) => execFileSync('unzip', ['-p', file, n], { maxBuffer: 1 << 28 }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  lookup = stubLookup('.example.test');
  for (const name of [`web-${MARK}.example.test`, `tcp-${MARK}.example.test`, `snmp-${MARK}.example.test`]) lookup.zone.set(name, ['127.0.0.1']);
  dns = await startDnsServer({ [`dns-${MARK}.example.test`]: { A: ['192.0.2.7'] } });
  target = http.createServer((_req, res) => { res.statusCode = 503; res.end('down'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  // A port nothing listens on: the TCP and SNMP checks fail there at once.
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));

  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', RATE_LIMIT_EXPORT: '100000' });
  org = await server.org({ plan: 'business' });
  api = server.api(org.apiKey);
  const port = (target.address() as AddressInfo).port;
  const monitor = async (name: string, kind: string, config: object) =>
    ok('createMonitor', await api.post('/monitors', { name, kind, workspaceId: org.workspaceId, intervalSeconds: 3600, config: JSON.stringify(config) }), 201).id as string;
  ids.web = await monitor('Config web', 'http', {
    url: `http://user-${MARK}:pass-${MARK}@web-${MARK}.example.test:${port}/path-${MARK}?q=query-${MARK}`,
    method: 'POST', headers: { 'X-Cfg': `header-${MARK}` }, body: `body-${MARK}`,
  });
  ids.tcp = await monitor('Config tcp', 'tcp', { host: `tcp-${MARK}.example.test`, port: closedPort });
  ids.dns = await monitor('Config dns', 'dns', { name: `dns-${MARK}.example.test`, recordType: 'A', expected: ['192.0.2.1'], resolver: dns.address });
  ids.snmp = await monitor('Config snmp', 'snmp', {
    host: `snmp-${MARK}.example.test`, port: closedPort, community: `community-${MARK}`, oids: [{ oid: '1.3.6.1.2.1.1.3.0', name: 'uptime' }],
  });
  const page = ok('createStatusPage', await api.post('/status-pages', { name: 'Config page', workspaceId: org.workspaceId }), 201);
  ok('addStatusPageComponent', await api.post(`/status-pages/${page.id}/components`, { monitorId: ids.web }), 201);
  ok('updateMonitor', await api.patch(`/monitors/${ids.web}`, { config: JSON.stringify({ url: `http://web-${MARK}.example.test:${port}/changed-${MARK}` }) }));

  // The checks run and open their outages; the DNS check's own words name its record.
  await until('the outages of the web, tcp and dns monitors', async () => {
    const rows = await server.db.selectFrom('incidents').select('monitor_id').where('organization_id', '=', org.organizationId).execute();
    return [ids.web, ids.tcp, ids.dns].every((id) => rows.some((r) => r.monitor_id === id));
  }, 20_000);
}, 60_000);
afterAll(async () => {
  await server.close();
  await dns.close();
  await new Promise((r) => target.close(r));
  lookup.restore();
});

test('the monitors export has no config column, only the fields that are not config', async () => {
  const rows = JSON.parse((await download('/export/monitors?format=json')).toString('utf8')) as Record<string, unknown>[];
  expect(rows.map((r) => r.name).sort()).toEqual(['Config dns', 'Config snmp', 'Config tcp', 'Config web']);
  for (const r of rows) {
    expect(Object.keys(r)).not.toContain('config');
    expect(r).toMatchObject({ kind: expect.any(String), intervalSeconds: 3600, workspaceId: org.workspaceId });
  }
  const header = (await download('/export/monitors')).toString('utf8').split('\n')[0];
  expect(header.split(',')).not.toContain('config');
});

test('no config value, nor the check words that quote one, appears in any byte of any export, CSV, JSON or zip', async () => {
  // The engine did write a config value into a timeline entry: the export must leave it out.
  const words = await server.db.selectFrom('incident_events').select('message').where('organization_id', '=', org.organizationId).execute();
  expect(words.some((w) => w.message?.includes(MARK))).toBe(true);

  const blobs: Buffer[] = [];
  for (const entity of ENTITIES) for (const format of ['csv', 'json']) blobs.push(await download(`/export/${entity}?format=${format}`));
  for (const format of ['csv', 'json']) blobs.push(...unzip(await download(`/export?format=${format}`)));
  const all = Buffer.concat(blobs).toString('utf8');
  expect(all).toContain(ids.dns); // the exports are not empty
  expect(all).toContain('monitor.created');
  for (const value of [MARK, dns.address, `:${closedPort}`]) expect({ value, found: all.toLowerCase().includes(value.toLowerCase()) }).toEqual({ value, found: false });

  // The outages are there, their check-worded entries without a message.
  const events = JSON.parse((await download('/export/incident-events?format=json')).toString('utf8')) as Record<string, unknown>[];
  expect(events.filter((e) => e.kind === 'opened').length).toBeGreaterThanOrEqual(3);
  for (const e of events.filter((x) => x.kind === 'opened')) expect(e.message).toBeNull();
});
