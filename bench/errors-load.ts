/**
 * The load client of the error-ingestion benchmark (bench/errors.ts): a
 * closed loop of `connections` keep-alive HTTP/1.1 connections on raw
 * sockets, each sending the next prebuilt envelope (bench/errors-events.ts)
 * with a fresh event id as soon as the previous answer is in, until the
 * deadline; requests in flight at the deadline are answered and counted
 * (unlike autocannon, which drops them), so every acknowledgement the
 * server gave is known. Latency is from the first byte written to the whole
 * answer read; the client's own work per request is a string of headers and
 * a head of ~400 bytes.
 */
import net from 'node:net';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { bodyOf, type PoolBody } from './errors-events';

/** Where a request of `p` goes: its path with the key in the query, and its headers (no length or encoding framing). */
export type Route = (p: PoolBody) => { path: string; headers: string };

export interface LoadResult {
  /** Answers by status; `error` = a connection lost or an answer that could not be read. */
  byStatus: Map<string, number>;
  /** Acknowledged event id → the pool issue it belongs to. */
  acked: Map<string, number>;
  /** 200 answers whose `id` was not the event's. */
  wrongId: number;
  latency: RecordableHistogram;
  /** Acknowledgements per whole second of the run. */
  perSecond: number[];
  sent: number;
  bytes: number;
  ms: number;
}

let seq = 0;
let cursor = 0;
const runId = (Date.now() & 0xffffffff).toString(16).padStart(8, '0') + (process.pid & 0xffffffff).toString(16).padStart(8, '0');

/** Loads `host:port` for `ms` with `connections` connections; `into` (optional) accumulates over several runs. */
export function load(host: string, port: number, pool: PoolBody[], route: Route, connections: number, ms: number): Promise<LoadResult> {
  const out: LoadResult = { byStatus: new Map(), acked: new Map(), wrongId: 0, latency: createHistogram(), perSecond: [], sent: 0, bytes: 0, ms: 0 };
  const t0 = performance.now();
  const deadline = t0 + ms;
  const count = (s: string) => out.byStatus.set(s, (out.byStatus.get(s) ?? 0) + 1);

  const connection = () => new Promise<void>((finished) => {
    let socket: net.Socket;
    let buf: Buffer | null = null;
    let inflight: { start: bigint; id: string; issue: number } | null = null;

    const send = () => {
      if (performance.now() >= deadline) { inflight = null; socket.end(); finished(); return; }
      const p = pool[cursor++ % pool.length];
      const id = runId + (seq++).toString(16).padStart(16, '0');
      const parts = bodyOf(p, id);
      const length = parts[0].length + parts[1].length;
      const { path, headers } = route(p);
      const chunked = p.style !== 'browser'; // the Node SDK streams its body (Transfer-Encoding: chunked, no Content-Length)
      const head = `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\n${headers}` +
        (chunked ? `Transfer-Encoding: chunked\r\n\r\n${length.toString(16)}\r\n` : `Content-Length: ${length}\r\n\r\n`);
      inflight = { start: process.hrtime.bigint(), id, issue: p.issue };
      socket.cork();
      socket.write(head, 'latin1');
      socket.write(parts[0]);
      socket.write(parts[1]);
      if (chunked) socket.write('\r\n0\r\n\r\n', 'latin1');
      socket.uncork();
      out.sent++;
      out.bytes += length;
    };

    const answered = (status: number, body: string, close: boolean) => {
      const r = inflight!;
      inflight = null;
      out.latency.record(Number(process.hrtime.bigint() - r.start));
      count(String(status));
      if (status === 200) {
        if (body.includes(r.id)) out.acked.set(r.id, r.issue);
        else out.wrongId++;
        const s = Math.floor((performance.now() - t0) / 1000);
        out.perSecond[s] = (out.perSecond[s] ?? 0) + 1;
      }
      if (close) { socket.removeAllListeners(); socket.destroy(); open(); } else send();
    };

    const onData = (chunk: Buffer) => {
      buf = buf ? Buffer.concat([buf, chunk]) : chunk;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.toString('latin1', 0, end);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (!length) return lost(); // chunked answers are not expected from this endpoint
      const total = end + 4 + Number(length[1]);
      if (buf.length < total) return;
      const body = buf.toString('utf8', end + 4, total);
      buf = buf.length > total ? buf.subarray(total) : null;
      answered(Number(head.slice(9, 12)), body, /\r\nconnection:\s*close/i.test(head));
    };

    let lostOnce = false;
    const lost = () => {
      if (lostOnce) return;
      lostOnce = true;
      if (inflight) { count('error'); inflight = null; }
      socket.removeAllListeners();
      socket.destroy();
      open();
    };

    const open = () => {
      buf = null;
      lostOnce = false;
      if (performance.now() >= deadline) { finished(); return; }
      socket = net.connect(port, host);
      socket.setNoDelay(true);
      socket.on('connect', send);
      socket.on('data', onData);
      socket.on('error', lost);
      socket.on('close', lost);
    };
    open();
  });

  return Promise.all(Array.from({ length: connections }, connection)).then(() => {
    out.ms = performance.now() - t0;
    return out;
  });
}

/** Milliseconds of a latency percentile. */
export const pct = (h: RecordableHistogram, p: number) => (h.count ? h.percentile(p) / 1e6 : 0);
