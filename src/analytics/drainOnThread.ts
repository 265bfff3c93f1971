/**
 * Runs the analytics drain on a thread of its own (drainThread.ts) in a
 * process that also answers requests (`npm start`). Counting is synchronous
 * JavaScript between statements; on the event loop that answers the events
 * it capped one process near 8,400 events/s (bench:analytics), and the batch
 * size had to stay small so that requests were not held up. On its own
 * thread it takes the batches a worker process takes, and the main thread
 * only answers and buffers. If the thread fails, the drain goes on in this
 * thread (one log line): events are never left uncounted.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Config } from '../config';
import type { Db } from '../db/connect';
import { onAppend } from '../ingest/buffer';
import type { Logger } from '../log';
import { ANALYTICS_BUFFER, startAnalyticsDrain, type AnalyticsDrain } from './drain';

export interface DrainThreadData {
  databaseUrl: string;
  logLevel: Config['logLevel'];
  logFormat: Config['logFormat'];
  options: { batch: number; gapMs: number };
}

/** The thread: compiled JavaScript next to this file, or the TypeScript source through tsx (tests, `npm run dev`). */
function startThread(data: DrainThreadData): Worker {
  if (__filename.endsWith('.js')) return new Worker(path.join(__dirname, 'drainThread.js'), { workerData: data });
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(path.join(__dirname, 'drainThread.ts'))});`;
  return new Worker(code, { eval: true, workerData: data });
}

/** Starts the drain on its own thread; `db` runs it here instead should the thread fail. */
export function startAnalyticsDrainThread(databaseUrl: string, db: Db, log: Logger, config: Pick<Config, 'logLevel' | 'logFormat'>): AnalyticsDrain {
  let fallback: AnalyticsDrain | null = null;
  let stopping = false;
  const thread = startThread({ databaseUrl, logLevel: config.logLevel, logFormat: config.logFormat, options: { batch: 10_000, gapMs: 1000 } });
  const failed = (e: unknown) => {
    if (stopping || fallback) return;
    log.error('the analytics drain thread stopped; counting on the main thread', e);
    fallback = startAnalyticsDrain(db, log);
  };
  thread.on('error', failed);
  thread.on('exit', (code) => failed(new Error(`exited with code ${code}`)));
  // One message per buffered batch (group commits are milliseconds apart), only while the thread is asleep for it.
  const unlisten = onAppend(ANALYTICS_BUFFER.table, () => { if (!fallback) thread.postMessage('wake'); });
  return {
    wake: () => thread.postMessage('wake'),
    async stop(finishMs = 1000) {
      stopping = true;
      unlisten();
      if (fallback) return fallback.stop(finishMs);
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        thread.once('message', done);
        thread.once('exit', done);
        thread.postMessage({ type: 'stop', finishMs });
      });
      await thread.terminate();
    },
  };
}
