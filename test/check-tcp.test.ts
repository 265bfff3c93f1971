/**
 * The tcp check kind against real local sockets: open and closed ports, names,
 * DNS failures, the private-address policy and a connect that never completes.
 */
import type { ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import { tcp } from '../src/engine/kinds/tcp';
import type { CheckContext } from '../src/engine/kinds/kind';
import type { NetPolicy } from '../src/net/policy';
import { spawnTracked } from './support/child';

function ctx(policy: Partial<NetPolicy> = {}, signal = AbortSignal.timeout(15000)): CheckContext {
  return { monitorId: 'm', intervalSeconds: 60, now: new Date(), signal, net: { allowPrivate: true, extraCa: [], ...policy } };
}
const check = (host: string, port: number, c = ctx()) => tcp.check({ host, port }, c).then((r) => r!);

let server: net.Server;
let openPort: number;
beforeAll(async () => {
  server = net.createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  openPort = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => server.close(r)));

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

it('an open port is up, with the connect time', async () => {
  const r = await check('127.0.0.1', openPort);
  expect(r).toMatchObject({ outcome: 'up', cause: null, message: expect.stringMatching(new RegExp(`^connected to port ${openPort} in \\d+ ms$`)) });
  expect(r.responseTimeMs).toEqual(expect.any(Number));
  expect((await check('localhost', openPort)).outcome).toBe('up');
});

it('a closed port is down: connection refused', async () => {
  expect(await check('127.0.0.1', await closedPort())).toMatchObject({ outcome: 'down', cause: 'connection_failed', message: 'connection refused', responseTimeMs: null });
});

it('an unknown name is a DNS failure', async () => {
  expect(await check('no-such-host.invalid', 80)).toMatchObject({ outcome: 'down', cause: 'dns_failure', message: 'could not resolve no-such-host.invalid' });
});

it('private addresses are refused when the policy says so (literal and by name)', async () => {
  for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
    expect(await check(host, openPort, ctx({ allowPrivate: false }))).toMatchObject({ outcome: 'down', cause: 'connection_failed', message: expect.stringContaining('private address') });
  }
});

describe('a connect that never completes', () => {
  // A listener whose process never accepts: once its backlog (1; Node reads 0 as "default") is full, further SYNs go unanswered.
  // (A non-routable address is no use here: this sandbox's egress answers every outbound connect.)
  let child: ChildProcess;
  let port: number;
  const fillers: net.Socket[] = [];
  beforeAll(async () => {
    const code = "const s=require('net').createServer();s.listen({port:0,host:'127.0.0.1',backlog:1},()=>{"
      + "process.stdout.write(s.address().port+'\\n');Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0)})";
    child = spawnTracked(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    port = await new Promise<number>((r) => child.stdout!.once('data', (d) => r(Number(String(d).trim()))));
    for (let i = 0; i < 64; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      const connected = await new Promise<boolean>((r) => { s.once('connect', () => r(true)); setTimeout(() => r(false), 300); });
      if (!connected) { s.destroy(); break; }
      fillers.push(s);
    }
  });
  afterAll(() => { fillers.forEach((s) => s.destroy()); child.kill('SIGKILL'); });

  it('is a timeout when the check signal aborts', async () => {
    const t = Date.now();
    const r = await check('127.0.0.1', port, ctx({}, AbortSignal.timeout(1000)));
    expect(r).toMatchObject({ outcome: 'down', cause: 'timeout', message: 'timed out', responseTimeMs: null });
    expect(Date.now() - t).toBeLessThan(2500);
  });
});
