/**
 * Child process of `npm run bench:alerts` (bench/alerts.ts): the webhook
 * receiver. A plain Node http server on 127.0.0.1 (ephemeral port) that
 * records, for every POST, the arrival time (Date.now() when the request's
 * headers arrived, before its body is read) and the event, delivery id,
 * incident id and incident.startedAt of the JSON body, and answers 200.
 * Sends `{ type: 'ready', url, pid }`; answers `{ type: 'collect' }` with
 * the arrivals so far (and forgets them), and `{ type: 'count' }` with how
 * many arrived by event; exits on `{ type: 'stop' }` or when the parent goes away.
 */
import http from 'node:http';

export interface ReceiverReady { type: 'ready'; url: string; pid: number }
/** One webhook that arrived. */
export interface Arrival { at: number; event: string; deliveryId: string; incidentId: string; startedAt: string }

let arrivals: Arrival[] = [];
let bad = 0;
const server = http.createServer((req, res) => {
  const at = Date.now();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; event: string; incident: { id: string; startedAt: string } };
      arrivals.push({ at, event: body.event, deliveryId: body.id, incidentId: body.incident.id, startedAt: body.incident.startedAt });
    } catch {
      bad++;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.maxConnections = 100_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}`, pid: process.pid } satisfies ReceiverReady);
});
process.on('message', (m: { type?: string }) => {
  if (m?.type === 'collect') {
    process.send!({ type: 'collect', arrivals, bad });
    arrivals = [];
  } else if (m?.type === 'count') {
    const byEvent: Record<string, number> = {};
    for (const a of arrivals) byEvent[a.event] = (byEvent[a.event] ?? 0) + 1;
    process.send!({ type: 'count', byEvent, bad });
  } else if (m?.type === 'stop') {
    setTimeout(() => process.exit(0), 1000).unref();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
