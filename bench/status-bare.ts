/**
 * Child process of `npm run bench:status` (bench/status.ts): the baseline, a
 * bare Express 5 app serving one static file (the status page's HTML as
 * Vigil rendered it) with `express.static`. Receives `{ type: 'file', dir }`,
 * answers `{ type: 'ready', url }`; exits on `{ type: 'stop' }`.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';

export interface StatusBareReady { type: 'ready'; url: string }

process.once('message', (m: { type: string; dir: string }) => {
  const app = express();
  app.use(express.static(m.dir));
  const server = app.listen(0, '127.0.0.1', () => {
    process.send!({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } satisfies StatusBareReady);
  });
  process.on('message', (n: { type?: string }) => { if (n?.type === 'stop') server.close(() => process.exit(0)); });
  process.on('disconnect', () => process.exit(0));
});
