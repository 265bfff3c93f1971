import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import snmp from 'net-snmp';
import { chainPem, makePki } from './support/certs';
import { ok, until } from './support/expect';
import { makeDue } from './support/monitors';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { startAgent, type TestAgent } from './support/snmp-agent';
import { tempDir } from './support/child';

// lastCheckDetail and value graphs from real checks run by the engine: a TLS
// server graded through the API, an SNMP agent's readings rolled up hourly.

const BASE = '1.3.6.1.4.1.55555.7';
let server: TestServer;
let api: ApiClient;
let workspaceId: string;
let tlsServer: https.Server;
let agent: TestAgent;
let caFile: string;

beforeAll(async () => {
  const pki = makePki();
  const leaf = pki.leaf({ names: ['localhost', '127.0.0.1'] });
  tlsServer = https.createServer({ key: leaf.key, cert: chainPem(leaf, pki.intermediate), minVersion: 'TLSv1.2' }, (_req, res) => {
    res.setHeader('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    res.end('ok');
  });
  tlsServer.on('tlsClientError', () => {});
  await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', () => r()));
  caFile = path.join(tempDir('vigil-ca-'), 'ca.pem');
  fs.writeFileSync(caFile, pki.ca.cert);
  agent = await startAgent({
    communities: ['s3cret-community'],
    scalars: [
      { name: 'load', oid: `${BASE}.1`, type: snmp.ObjectType.Gauge, value: 42 },
      { name: 'name', oid: `${BASE}.2`, type: snmp.ObjectType.OctetString, value: 'core-1' },
    ],
  });
  server = await startTestServer({ WORKER: 'true', CHECKS_EXTRA_CA_FILES: caFile, RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
  workspaceId = org.workspaceId;
});
afterAll(async () => {
  await server.close();
  await agent.close();
  tlsServer.close();
  tlsServer.closeAllConnections();
});

async function checked(id: string) {
  return until(`a check of ${id}`, async () => {
    const m = ok('getMonitor', await api.get(`/monitors/${id}`));
    return m.status !== 'pending' ? m : null;
  });
}

test('tls_audit: the check gives a grade and findings in lastCheckDetail (single read only)', async () => {
  const port = (tlsServer.address() as AddressInfo).port;
  const id = ok('createMonitor', await api.post('/monitors', { name: 'tls', kind: 'tls_audit', workspaceId, config: JSON.stringify({ host: 'localhost', port }) }), 201).id;
  const m = await checked(id);
  expect(m.status).toBe('up');
  expect(m.lastCheckDetail.grade).toMatch(/^A/);
  expect(m.lastCheckDetail.findings.map((f: { code: string }) => f.code)).toContain('cert_ok');
  expect(m.lastCheckDetail.findings.every((f: { severity: string }) => ['info', 'warning', 'critical'].includes(f.severity))).toBe(true);
  // Lists never carry it.
  const listed = ok('listMonitors', await api.get('/monitors')).find((x: { id: string }) => x.id === id);
  expect(listed).not.toHaveProperty('lastCheckDetail');
});

test('snmp: readings in lastCheckDetail, a value graph with units and raw series; the community never shown', async () => {
  const id = ok('createMonitor', await api.post('/monitors', {
    name: 'switch', kind: 'snmp', workspaceId,
    config: JSON.stringify({ host: '127.0.0.1', port: agent.port, community: 's3cret-community', oids: [{ oid: `${BASE}.1.0`, name: 'load', unit: '%' }, { oid: `${BASE}.2.0`, name: 'name' }] }),
  }), 201).id;
  const m = await checked(id);
  expect(m.status).toBe('up');
  expect(m.lastCheckDetail.readings).toEqual(expect.arrayContaining([
    expect.objectContaining({ name: 'load', value: 42, unit: '%' }),
    expect.objectContaining({ name: 'name', text: 'core-1', unit: null }),
  ]));
  // A second check, so the hourly roll-up merges readings.
  await makeDue(server.db, [id]);
  await until('a second check', async () => Number((await server.db.selectFrom('check_results').select((eb) => eb.fn.countAll<number>().as('n')).where('monitor_id', '=', id).executeTakeFirstOrThrow()).n) >= 2);
  const graph = ok('getMonitorGraph', await api.get(`/monitors/${id}/graph?hours=2`));
  expect(graph.type).toBe('value');
  const load = graph.series.find((s: { name: string }) => s.name === 'load');
  expect(load).toMatchObject({ unit: '%', raw: false });
  expect(load.points).toHaveLength(2);
  expect(load.points[1].value).toBe(42);
  expect(JSON.stringify(await api.get(`/monitors/${id}`))).not.toContain('s3cret-community');
});
