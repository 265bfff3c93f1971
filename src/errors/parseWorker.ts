/**
 * The envelope parser's thread (parsePool.ts): parses envelope and store
 * bodies and summarises their events for grouping, so that the main
 * thread, which answers every HTTP request, does not spend an event's
 * largest cost (JSON.parse of 2–20 KB, grouping) itself. Pure work: no I/O.
 */
import { parentPort } from 'node:worker_threads';
import { parseRequest, type ParseRequest } from './parsed';

// Each body is answered as soon as it is parsed, not with its batch: a request waits for its own parse only.
parentPort!.on('message', (batch: ParseRequest[]) => {
  for (const req of batch) {
    const r = parseRequest(req);
    parentPort!.postMessage([r], r.events ? r.events.map((e) => e.raw.buffer as ArrayBuffer) : []);
  }
});
