/**
 * Where envelope bodies are parsed: on a thread of their own (parseWorker.ts),
 * so the main thread, which reads and answers every request and talks to
 * PostgreSQL, does not also spend the JSON.parse and grouping of every 2–20
 * KB event (more than a third of an event's CPU in bench:errors). Requests
 * made in one turn of the event loop go over as one message. Bodies under
 * INLINE_BYTES are parsed here: for them the message costs more than the
 * parse. If the thread fails, cannot start, or holds a batch past
 * DEADLINE_MS (it is then ended), the requests it held are parsed here
 * instead: the SDKs do not retry a failed answer, so a failure of the
 * thread must not lose their events. The next request starts a new thread.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log';
import { parseRequest, refusalError, type ParsedEvent, type ParseRequest, type ParseResult } from './parsed';

/** Bodies smaller than this are parsed on the calling thread. */
const INLINE_BYTES = 2048;
/** A batch the thread has not answered within this is taken back (the largest envelope, 20 MiB, parses in about a second). */
const DEADLINE_MS = 15_000;

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

/** `thread` makes the parser thread (tests give one that fails). */
export function parsePool(log: Logger, o: { thread?: () => Worker } = {}): ParsePool {
  const makeThread = o.thread ?? startWorker;
  let worker: Worker | null = null;
  let nextId = 1;
  let queue: { req: ParseRequest; transfer: ArrayBuffer | null }[] = [];
  const pending = new Map<number, { resolve: (r: ParseResult) => void; reject: (e: unknown) => void }>();
  /** Until then bodies are parsed here: a thread failed or could not start (no new thread per request while it keeps failing). */
  let inlineUntil = 0;

  const fail = (w: Worker, e: unknown) => {
    if (worker !== w) return;
    worker = null;
    inlineUntil = Date.now() + 10_000;
    log.error('the envelope parser thread stopped; parsing on the main thread for 10 s', e);
    for (const p of pending.values()) p.reject(e instanceof Error ? e : new Error(String(e)));
    pending.clear();
  };
  const ensure = (): Worker => {
    if (worker) return worker;
    const w = makeThread();
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
    let w: Worker;
    try {
      w = ensure();
      w.postMessage(batch.map((b) => b.req), batch.flatMap((b) => (b.transfer ? [b.transfer] : [])));
    } catch (e) {
      inlineUntil = Date.now() + 60_000;
      log.error('the envelope parser thread could not start; parsing on the main thread for a minute', e);
      for (const b of batch) {
        pending.get(b.req.id)?.reject(e);
        pending.delete(b.req.id);
      }
      return;
    }
    // A wedged thread is ended: its 'exit' takes back everything it held.
    const ids = batch.map((b) => b.req.id);
    const timer = setTimeout(() => {
      if (ids.some((id) => pending.has(id))) void w.terminate();
    }, DEADLINE_MS);
    timer.unref();
  };

  return {
    async parse(kind, body) {
      if (body.length < INLINE_BYTES || Date.now() < inlineUntil) return settle(parseRequest({ id: 0, kind, body }));
      // The thread gets a copy (transferred, not copied again): the body itself stays readable here for the fallback.
      const bytes = new Uint8Array(body);
      const req: ParseRequest = { id: nextId++, kind, body: bytes };
      const result = new Promise<ParseResult>((resolve, reject) => pending.set(req.id, { resolve, reject }));
      if (queue.length === 0) setImmediate(send);
      queue.push({ req, transfer: bytes.buffer as ArrayBuffer });
      let r: ParseResult;
      try {
        r = await result;
      } catch {
        // The thread failed (logged once by `fail`): this body is parsed here.
        r = parseRequest({ id: 0, kind, body });
      }
      return settle(r);
    },
  };
}
