/**
 * Child process of `npm run bench:checks` (bench/checks.ts): the target the
 * http monitors check. A plain Node http server on 127.0.0.1 (ephemeral port)
 * answering every request `200 ok`, without keep-alive (Vigil's check opens a
 * fresh connection per check anyway): at once, or BENCH_TARGET_DELAY_MS late
 * (a slow target, so that checks stay in flight longer). Sends `{ type:
 * 'ready', url, pid }` over IPC, and exits on `{ type: 'stop' }` or when the
 * parent goes away.
 */
import http from 'node:http';

export interface TargetReady { type: 'ready'; url: string; pid: number }

const delay = Number(process.env.BENCH_TARGET_DELAY_MS || 0);
const answer = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2', connection: 'close' }).end('ok');
const server = http.createServer((req, res) => {
  if (delay > 0) setTimeout(answer, delay, res);
  else answer(res);
});
server.keepAliveTimeout = 0;
server.maxConnections = 100_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}`, pid: process.pid } satisfies TargetReady);
});
process.on('message', (m: { type?: string }) => {
  if (m?.type !== 'stop') return;
  setTimeout(() => process.exit(0), 1000).unref();
  server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
