/**
 * The analytics drain's thread (see drainOnThread.ts): its own pool of
 * connections and its own event loop, so counting batches of events never
 * holds up the requests the main thread answers. Messages: 'wake' (events
 * were buffered), { type: 'stop', finishMs } (answers 'stopped').
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connectDb } from '../db/connect';
import { createLogger } from '../log';
import { startAnalyticsDrain } from './drain';
import type { DrainThreadData } from './drainOnThread';

const data = workerData as DrainThreadData;
const { db } = connectDb(data.databaseUrl, 4);
const log = createLogger(data.logLevel, { format: data.logFormat });
const drain = startAnalyticsDrain(db, log, data.options);

parentPort!.on('message', (m: 'wake' | { type: 'stop'; finishMs?: number }) => {
  if (m === 'wake') return drain.wake();
  void drain.stop(m.finishMs).finally(async () => {
    await db.destroy().catch(() => undefined);
    parentPort!.postMessage('stopped');
  });
});
