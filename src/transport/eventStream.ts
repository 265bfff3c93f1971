/**
 * Sending a server-sent-events answer (GET /stream, src/stream/): unlike a
 * file it is never compressed (gzip would hold events back in its buffer),
 * never buffered by a proxy that honours `X-Accel-Buffering`, and never an
 * attachment; it goes out chunk by chunk until the producer ends or the
 * client goes away, which ends the producer at once (not at its next event).
 */
import type { Request, Response } from 'express';
import type { FileAnswer } from './fileAnswer';
import { commonHeaders } from './respond';

/** The content type that makes a raw answer an event stream. */
export const EVENT_STREAM = 'text/event-stream';

/** True when a raw answer is an event stream. */
export function isEventStream(file: unknown): file is FileAnswer {
  return typeof file === 'object' && file !== null && (file as FileAnswer).contentType === EVENT_STREAM;
}

export async function sendEventStream(req: Request, res: Response, file: FileAnswer, log: (msg: string, e: unknown) => void): Promise<void> {
  const content = file.content as AsyncIterable<string> & { close?(): void };
  const chunks = content[Symbol.asyncIterator]();
  let gone = false;
  const stop = () => { gone = true; content.close?.(); };
  res.once('close', stop);
  // A client gone while the stream was being opened (its 'close' already fired) is never waited for.
  if (res.destroyed || req.socket.destroyed) stop();
  try {
    // The first chunk (the cursor, a replay or a reset) is ready at once: headers and it leave together.
    const first = await chunks.next();
    commonHeaders(res);
    res.status(200).setHeader('Content-Type', `${EVENT_STREAM}; charset=utf-8`);
    res.setHeader('X-Accel-Buffering', 'no');
    if (!first.done) res.write(first.value);
    else res.flushHeaders();
    for (let n = await chunks.next(); !n.done && !gone; n = await chunks.next()) {
      if (!res.write(n.value) && !gone) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    }
  } catch (e) {
    if (!gone) log('event stream failed', e);
  } finally {
    stop();
    await chunks.return?.(undefined);
    if (!res.writableEnded) res.end();
  }
}
