import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { trackConnections } from '../src/transport/drain';

// A client that sends its next request on a keep-alive connection that has
// sat idle, in the very moment shutdown begins (the request already in the
// server's socket buffer, not yet read), gets its answer: pending input is
// read before an idle connection is closed, so it never meets a reset.

const REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';

test('a request waiting unread when the drain starts is answered, not reset', async () => {
  const server = http.createServer((_req, res) => res.end('ok'));
  const drainer = trackConnections(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  const errors: string[] = [];
  socket.on('data', (d) => { received += d.toString(); });
  socket.on('error', (e: NodeJS.ErrnoException) => errors.push(e.code ?? e.message));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write(REQUEST);
  await waitFor(() => (received.match(/HTTP\/1\.1 200/g) ?? []).length === 1);
  // Idle for longer than the drain's idle threshold.
  await new Promise((r) => setTimeout(r, 400));
  // The next request reaches the server's kernel buffer, and the drain starts in the same turn,
  // before the event loop has read it.
  socket.write(REQUEST);
  await drainer.drain(5000);
  await closed;
  expect(errors).toEqual([]);
  expect((received.match(/HTTP\/1\.1 200/g) ?? []).length).toBe(2);
});

async function waitFor(ok: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
