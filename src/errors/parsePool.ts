/**
 * Where envelope bodies are parsed: on a thread of their own (parseWorker.ts),
 * so the main thread, which reads and answers every request and talks to
 * PostgreSQL, does not also spend the JSON.parse and grouping of every 2–20
 * KB event (more than a third of an event's CPU in bench:errors). Requests
 * made in one turn of the event loop go over as one message. Bodies under
 * INLINE_BYTES are parsed here: for them the message costs more than the
 * parse. If the thread fails, what it held fails (answered 503, the SDKs
 * retry) and the next request starts a new one.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log';
import { parseRequest, refusalError, type ParsedEvent, type ParseRequest, type ParseResult } from './parsed';

/** Bodies smaller than this are parsed on the calling thread. */
const INLINE_BYTES = 2048;

export interface Parsed { dsn: string | null; events: ParsedEvent[] }

export interface ParsePool {
  /** Parses an envelope (or store) body; rejects with the ApiError of a malformed one. */
  parse(kind: 'envelope' | 'store', body: Buffer): Promise<Parsed>;
}

function settle(r: ParseResult): Parsed {
  if (r.error) throw refusalError(r.error);
  return { dsn: r.dsn ?? null, events: r.events ?? [] };
}

/** The parser thread: compiled JavaScript next to this file, or the TypeScript source through tsx (tests, `npm run dev`). */
function startWorker(): Worker {
  if (__filename.endsWith('.js')) return new Worker(path.join(__dirname, 'parseWorker.js'));
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(path.join(__dirname, 'parseWorker.ts'))});`;
  return new Worker(code, { eval: true });
}

export function parsePool(log: Logger): ParsePool {
  let worker: Worker | null = null;
  let nextId = 1;
  let queue: { req: ParseRequest; transfer: ArrayBuffer | null }[] = [];
  const pending = new Map<number, { resolve: (r: ParseResult) => void; reject: (e: unknown) => void }>();

  const fail = (w: Worker, e: unknown) => {
    if (worker !== w) return;
    worker = null;
    log.error('the envelope parser thread stopped', e);
    for (const p of pending.values()) p.reject(e instanceof Error ? e : new Error(String(e)));
    pending.clear();
  };
  const ensure = (): Worker => {
    if (worker) return worker;
    const w = startWorker();
    w.on('message', (results: ParseResult[]) => {
      for (const r of results) {
        const p = pending.get(r.id);
        pending.delete(r.id);
        p?.resolve(r);
      }
    });
    w.on('error', (e) => fail(w, e));
    w.on('exit', (code) => fail(w, new Error(`exited with code ${code}`)));
    // After the listeners (a 'message' listener refs it again): the thread never keeps the process alive by itself.
    w.unref();
    return (worker = w);
  };
  const send = () => {
    const batch = queue;
    queue = [];
    try {
      ensure().postMessage(batch.map((b) => b.req), batch.flatMap((b) => (b.transfer ? [b.transfer] : [])));
    } catch (e) {
      for (const b of batch) {
        pending.get(b.req.id)?.reject(e);
        pending.delete(b.req.id);
      }
    }
  };

  return {
    async parse(kind, body) {
      if (body.length < INLINE_BYTES) return settle(parseRequest({ id: 0, kind, body }));
      // The body crosses over without a copy when it owns its memory; else in a copy that does.
      const alone = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
      const bytes = alone ? body : new Uint8Array(body);
      const req: ParseRequest = { id: nextId++, kind, body: bytes };
      const result = new Promise<ParseResult>((resolve, reject) => pending.set(req.id, { resolve, reject }));
      if (queue.length === 0) setImmediate(send);
      queue.push({ req, transfer: bytes.buffer as ArrayBuffer });
      return settle(await result);
    },
  };
}
