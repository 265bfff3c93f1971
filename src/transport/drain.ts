/**
 * Closing an HTTP server without a client seeing a reset. Node's
 * `server.close()` closes every idle keep-alive connection at once, which
 * races a client that is writing its next request on one of them (under load
 * that is most of them): the request meets a reset. Instead: stop listening,
 * let each connection finish the request it has (answers carry `Connection:
 * close` once shutdown began, see observability/http.ts), close a connection
 * only once it has sat idle for a moment, and cut the rest at the deadline.
 */
import http from 'node:http';
import net from 'node:net';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A monotonic clock: a step of the wall clock (NTP, a test moving it) must not make a connection look busy for days. */
const now = () => performance.now();

/** A connection counts as abandoned by its client after this long without a byte from it. */
const IDLE_MS = 250;

interface Conn { active: number; idleSince: number }

export interface Drainer {
  /** Stops listening, waits for the connections as above; those left at `deadlineMs` are destroyed. */
  drain(deadlineMs: number): Promise<void>;
}

/** Resolves after the event loop's next poll phase: I/O that was waiting when a timer fired has been read by then. */
const afterPendingIo = () => new Promise<void>((resolve) => setImmediate(resolve));

export function trackConnections(server: http.Server): Drainer {
  const conns = new Map<Socket, Conn>();
  server.on('connection', (socket: Socket) => {
    const c: Conn = { active: 0, idleSince: now() };
    conns.set(socket, c);
    // Any byte from the client (the start of its next request) makes the connection busy again.
    socket.on('data', () => { c.idleSince = now(); });
    socket.once('close', () => conns.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const c = conns.get(req.socket);
    if (!c) return;
    c.active++;
    res.once('close', () => { c.active--; c.idleSince = now(); });
  });
  const idle = (c: Conn, t: number) => c.active === 0 && t - c.idleSince >= IDLE_MS;
  return {
    async drain(deadlineMs) {
      const end = now() + deadlineMs;
      // net.Server's close: stop accepting, without http.Server's closing of idle connections.
      const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
      while (conns.size > 0 && now() < end) {
        const candidates = [...conns].filter(([, c]) => idle(c, now()));
        if (candidates.length) {
          // A timer runs before the poll phase: on a loaded machine a request may already sit unread in the
          // kernel's buffer, and destroying its socket then answers it with a reset. Read pending I/O first.
          await afterPendingIo();
          const t = now();
          for (const [socket, c] of candidates) if (conns.has(socket) && idle(c, t)) socket.destroy();
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      for (const socket of conns.keys()) socket.destroy();
      await closed;
    },
  };
}
