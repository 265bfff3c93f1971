/**
 * Child process of `npm run bench:alerts` (bench/alerts.ts): the target the
 * http monitors check. A plain Node http server on 127.0.0.1 (ephemeral port)
 * answering every request at once without keep-alive: `200 ok` while healthy,
 * `500 failing` after `{ type: 'fail', on: true }` (answered `{ type: 'fail' }`
 * once switched). Sends `{ type: 'ready', url, pid }` over IPC, and exits on
 * `{ type: 'stop' }` or when the parent goes away.
 */
import http from 'node:http';

export interface TargetReady { type: 'ready'; url: string; pid: number }

let failing = false;
const server = http.createServer((req, res) => {
  const [status, body] = failing ? [500, 'failing'] : [200, 'ok'];
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': String(body.length), connection: 'close' });
  res.end(body);
});
server.keepAliveTimeout = 0;
server.maxConnections = 100_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}`, pid: process.pid } satisfies TargetReady);
});
process.on('message', (m: { type?: string; on?: boolean }) => {
  if (m?.type === 'fail') {
    failing = m.on === true;
    process.send!({ type: 'fail' });
  } else if (m?.type === 'stop') {
    setTimeout(() => process.exit(0), 1000).unref();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
