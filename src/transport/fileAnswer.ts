/**
 * File answers of raw-response operations (exports). A file is a whole
 * Buffer or string, or an async iterable of chunks that REST streams to the
 * client with backpressure: the next chunk is asked for only once the socket
 * took the previous one, so a large export never sits in memory. A client
 * that goes away destroys the stream, which ends the producer (its cursor and
 * transaction: src/export/cursor.ts).
 *
 * Protobuf and Connect answers carry the file in a message
 * (`content`, `contentType`, `filename`), so they are built in memory,
 * within BUFFERED_FILE_LIMIT.
 */
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Request, Response } from 'express';
import type { FileOutput } from '../../gen/routes';
import { ApiError } from '../pipeline/errors';
import { acceptsGzip, commonHeaders, sendBytes } from './respond';

/** A file answer: the file whole, or streamed. */
export type FileAnswer = FileOutput;
type Chunks = AsyncIterable<Uint8Array | string>;

/** The largest file a protobuf or Connect answer carries (it is built in memory). */
export const BUFFERED_FILE_LIMIT = 256 * 2 ** 20;

function isStreamed(content: FileAnswer['content']): content is Chunks {
  return typeof content !== 'string' && !Buffer.isBuffer(content);
}

const toBuffer = (chunk: Uint8Array | string) => (typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));

/** The file with its content read whole (for messages); 413 `export_too_large` past `limit`. */
export async function bufferedFile(file: FileAnswer, limit = BUFFERED_FILE_LIMIT): Promise<{ content: Buffer; contentType: string; filename: string }> {
  const { content, contentType, filename } = file;
  if (!isStreamed(content)) return { content: toBuffer(content), contentType, filename };
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of content) {
    const b = toBuffer(chunk);
    size += b.length;
    // Leaving the loop ends the producer (its generator's finally, a stream's destroy).
    if (size > limit) {
      throw new ApiError(413, 'export_too_large', `The file is over ${limit / 2 ** 20} MiB, more than a protobuf or Connect answer carries; download it over REST, where it is streamed.`,
        { limit: String(limit) });
    }
    parts.push(b);
  }
  return { content: Buffer.concat(parts), contentType, filename };
}

/** Content types not worth compressing again. */
const COMPRESSED = /^application\/(zip|gzip)/;

/**
 * Sends a file answer over REST as an attachment. A streamed file waits for
 * its first chunk before the status line, so a producer failing to start
 * (the database) is still an error answer; a failure after that can only cut
 * the response short, and is logged.
 */
export async function sendFile(req: Request, res: Response, status: number, file: FileAnswer, log: (msg: string, e: unknown) => void): Promise<void> {
  const disposition = `attachment; filename="${file.filename.replace(/["\\\r\n]/g, '_')}"`;
  if (!isStreamed(file.content)) {
    res.setHeader('Content-Disposition', disposition);
    return sendBytes(req, res, status, file.contentType, file.content);
  }
  const chunks = file.content[Symbol.asyncIterator]();
  const first = await chunks.next();
  async function* body() {
    if (!first.done) yield toBuffer(first.value);
    // Delegating forwards an early stop (client gone) to the producer.
    yield* { [Symbol.asyncIterator]: () => chunks };
  }
  commonHeaders(res);
  res.status(status).setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Disposition', disposition);
  const gzip = acceptsGzip(req) && !COMPRESSED.test(file.contentType);
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  const source = Readable.from(body(), { objectMode: false });
  const done = (err: NodeJS.ErrnoException | null) => {
    if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') log('file answer cut short', err);
  };
  if (gzip) pipeline(source, zlib.createGzip({ level: 6 }), res, done);
  else pipeline(source, res, done);
}
