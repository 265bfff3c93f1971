import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProbe, revokeProbe } from '../src/domain/probes';
import { runProbe } from '../src/probe/main';
import { responseValidators } from '../gen/validators.cjs';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { until } from './support/expect';

// A private probe pulls only its own monitors' work, runs the same check code,
// posts results that move the monitor; a revoked probe gets no work. The
// server's own workers never check a probe's monitors.

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
let target: http.Server;
let url: string;
const hits: string[] = [];

beforeAll(async () => {
  target = http.createServer((req, res) => { hits.push(req.url ?? ''); res.end('ok'); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(async () => {
  await server.close();
  await new Promise((r) => target.close(r));
});

test('a probe runs its monitors and reports; GET /probes shows it; revoked probes get no work', async () => {
  const { probeId, token } = await createProbe(server.db, org.organizationId, 'office');
  expect(token).toMatch(/^pr_/);
  const other = await server.org();
  const foreign = await server.api(other.apiKey).post('/monitors', { name: 'x', kind: 'http', workspaceId: other.workspaceId, config: JSON.stringify({ url }), probeId });
  expect(foreign.status).toBe(404);
  expect(foreign.body.details.field).toBe('probeId');

  const created = await api.post('/monitors', { name: 'inside', kind: 'http', workspaceId: org.workspaceId, intervalSeconds: 60, config: JSON.stringify({ url: `${url}/via-probe` }), probeId });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  expect(created.body.data.probeId).toBe(probeId);

  // The server's own worker leaves it alone.
  await new Promise((r) => setTimeout(r, 1200));
  expect(hits.filter((h) => h === '/via-probe')).toHaveLength(0);

  const stop = new AbortController();
  const running = runProbe({ server: server.url, token, signal: stop.signal, idleMs: 100 });
  try {
    const m = await until('the probe result', async () => {
      const r = await api.get(`/monitors/${id}`);
      return r.body.data.status === 'up' ? r.body.data : null;
    });
    expect(m.lastMessage).toMatch(/200/);
    expect(hits).toContain('/via-probe');
    const probes = await api.get('/probes');
    expect(responseValidators.listProbes(probes.body)).toBe(true);
    const p = probes.body.data.find((x: any) => x.id === probeId);
    expect(p).toMatchObject({ name: 'office', monitorCount: 1, revoked: false, version: '0.1.0' });
    expect(p.lastSeenAt).not.toBeNull();
    expect(p.hostname).toEqual(expect.any(String));
    expect(JSON.stringify(probes.body)).not.toMatch(/region/i);
  } finally {
    stop.abort();
    await running.catch(() => undefined);
  }

  await revokeProbe(server.db, probeId);
  const refused = await fetch(`${server.url}/probe/v1/claim`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  expect(refused.status).toBe(401);
  await expect(runProbe({ server: server.url, token })).rejects.toThrow(/revoked or unknown/);
  const listed = (await api.get('/probes')).body.data.find((x: any) => x.id === probeId);
  expect(listed.revoked).toBe(true);
});
