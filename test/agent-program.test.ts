/**
 * The agent program itself (`npm run agent`), run as a child process against
 * a test server: it reports real samples of this machine with its identity,
 * keeps them (bounded) while the server is away and delivers them when it
 * comes back, and stops when its agent is deleted.
 */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { ok, until } from './support/expect';
import { ROOT, spawnTracked } from './support/child';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

let server: TestServer;
let api: ApiClient;

beforeAll(async () => {
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000' });
  api = server.api((await server.org({ plan: 'enterprise' })).apiKey);
});
afterAll(() => server.close());

interface AgentChild { child: ChildProcess; output(): string; exited: Promise<number | null>; stop(): Promise<number | null> }

/** Starts `src/agent/main.ts` as `npm run agent` does (tsx), with these arguments. */
function startAgent(args: string[]): AgentChild {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/agent/main.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child, exited, output: () => out,
    stop: () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); return exited; },
  };
}

async function enrol(name: string) {
  return ok('enrollAgent', await api.post('/agents', { name }), 201) as { id: string; token: string };
}

const samplesOf = async (id: string) => ok('getAgentMetrics', await api.get(`/agents/${id}/metrics?limit=5000`)) as Record<string, any>[];

test('the agent reports real samples of this machine and its identity; deleting it stops it', async () => {
  const a = await enrol('this-machine');
  const agent = startAgent(['--server', server.url, '--token', a.token, '--interval', '1']);
  try {
    const seen = await until('the agent to report', async () => {
      const row = ok('listAgents', await api.get('/agents')).find((x: { id: string }) => x.id === a.id);
      return row?.lastSeenAt ? row : null;
    }, 30_000);
    expect(seen).toMatchObject({ hostname: os.hostname(), version: '0.1.0' });
    expect(seen.os).toContain(process.platform);
    const samples = await until('two samples', async () => { const s = await samplesOf(a.id); return s.length >= 2 ? s : null; }, 30_000);
    // Newest first, and real figures of this machine.
    expect(Date.parse(samples[0].at)).toBeGreaterThan(Date.parse(samples[1].at));
    for (const s of samples) {
      expect(s.cpuPercent).toEqual(expect.any(Number));
      expect(s.cpuPercent).toBeGreaterThanOrEqual(0);
      expect(s.cpuPercent).toBeLessThanOrEqual(100);
      expect(s.memoryPercent).toBeGreaterThan(0);
      expect(s.memoryTotalBytes).toBe(os.totalmem());
      expect(s.diskPercent).toEqual(expect.any(Number));
      expect(s.disks.length).toBeGreaterThan(0);
      expect(s.disks.map((d: { mount: string }) => d.mount)).toContain('/');
      expect(s.diskPercent).toBe(Math.max(...s.disks.map((d: { percent: number }) => d.percent)));
      expect(s.load1).toEqual(expect.any(Number));
      expect(s.networkRxBytes).toBeGreaterThanOrEqual(0);
      expect(s.networkRxBytesPerSecond).toBeGreaterThanOrEqual(0);
    }

    // Deleted: its token is refused at once and the program stops, saying why.
    ok('deleteAgent', await api.delete(`/agents?id=${a.id}`));
    const code = await Promise.race([agent.exited, new Promise((r) => setTimeout(() => r('still running'), 15_000))]);
    expect(code).toBe(3);
    expect(agent.output()).toContain('refused this agent token');
  } finally {
    await agent.stop();
  }
}, 90_000);

test('while the server is away the agent keeps its newest samples (bounded) and delivers them when it is back', async () => {
  const a = await enrol('patient');
  const target = new URL(server.url);
  // The server as the agent reaches it: through a proxy on a port that refuses connections until it listens.
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) { sockets.add(s); s.on('error', () => s.destroy()); s.on('close', () => sockets.delete(s)); }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as net.AddressInfo).port;
  await new Promise((r) => proxy.close(r));
  const started = Date.now();
  const agent = startAgent(['--server', `http://127.0.0.1:${port}`, '--token', a.token, '--interval', '1', '--buffer', '4']);
  try {
    await until('the agent to find the server away', async () => agent.output().includes('server unreachable'), 30_000);
    // Several more samples than the outbox holds are taken while away.
    await new Promise((r) => setTimeout(r, 7000));
    expect(await samplesOf(a.id)).toEqual([]);
    const back = Date.now();
    await new Promise<void>((r) => proxy.listen(port, '127.0.0.1', r));
    const samples = await until('the kept samples and newer ones', async () => {
      const s = await samplesOf(a.id);
      return s.some((x) => Date.parse(x.at) > back) ? s : null;
    }, 30_000);
    const kept = samples.filter((s) => Date.parse(s.at) < back);
    // The newest few taken during the outage arrive; the older ones were dropped for room (at most 4 at a time).
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThanOrEqual(4);
    expect(Math.min(...kept.map((s) => Date.parse(s.at)))).toBeLessThan(back - 1000);
    expect(agent.child.exitCode).toBeNull();
    const dropped = Number(/server back; .*\((\d+) dropped for room/.exec(agent.output())?.[1]);
    expect(dropped).toBeGreaterThanOrEqual(3);
    // Nothing taken before the outage's last few samples arrived: those were the ones dropped.
    expect(Math.min(...kept.map((s) => Date.parse(s.at)))).toBeGreaterThan(started + 3000);
  } finally {
    await agent.stop();
    for (const s of sockets) s.destroy();
    if (proxy.listening) await new Promise((r) => proxy.close(r));
  }
}, 90_000);
