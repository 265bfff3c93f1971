/**
 * Child process of `npm run bench:api` (bench/api.ts): the baseline. A bare
 * Express 5 app, as `express()` comes, that answers `GET /api/v1/monitors/:id`
 * and `GET /api/v1/monitors` with the same data Vigil returned for those
 * requests, held in memory as objects and sent with `res.json` (the issue's
 * reference: "a bare Express 5 app … answers about 3,900 requests/s"), plus the
 * two headers Vigil adds to every answer. No auth, no database.
 *
 * Protocol: receives `{ type: 'payloads', single, list }` over IPC, answers
 * `{ type: 'ready', url }`; exits on `{ type: 'stop' }`.
 */
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';

export interface BarePayloads { type: 'payloads'; single: string; list: string; contentType: string }
export interface BareReady { type: 'ready'; url: string }

function serve(p: BarePayloads): void {
  const single: unknown = JSON.parse(p.single);
  const list: unknown = JSON.parse(p.list);
  const send = (res: Response, body: unknown) => {
    res.setHeader('Vary', 'Accept, Content-Type');
    res.setHeader('Cache-Control', 'private, no-store');
    res.json(body);
  };
  const app = express();
  app.get('/api/v1/monitors', (_req, res) => send(res, list));
  app.get('/api/v1/monitors/:id', (_req, res) => send(res, single));
  const server = app.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.send!({ type: 'ready', url: `http://127.0.0.1:${port}` } satisfies BareReady);
  });
  server.keepAliveTimeout = 65_000;
  const stop = () => { server.close(); server.closeAllConnections(); process.exit(0); };
  process.on('message', (m: { type?: string }) => { if (m?.type === 'stop') stop(); });
  process.on('disconnect', stop); // the parent died: do not linger
}

process.once('message', (m: BarePayloads) => serve(m));
