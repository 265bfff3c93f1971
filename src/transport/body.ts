import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import { ApiError } from '../pipeline/errors';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The most bytes (after decompression) each kind of endpoint reads from a
 * request body: the one table every transport takes its limit from. A body
 * over its limit is refused (413 / `resource_exhausted`) as soon as the limit
 * is passed, never read whole; a declared `Content-Length` over it is refused
 * before a byte is read.
 */
export const BODY_LIMITS = {
  /** REST (JSON, protobuf) and Connect bodies of `/api/v1` operations. */
  api: 8 * MiB,
  /** The private-probe protocol (`/probe/v1`): at most 1,000 results a call. */
  probe: 5 * MiB,
  /** Mobile symbols (`POST /symbols`, REST only: a raw file of up to 200 MiB compressed). */
  symbols: 200 * MiB,
  /** sentry-cli's chunk uploads (`/api/0/…/chunk-upload/`): at most 4 chunks of 8 MiB a request (src/errors/upload/chunks.ts), with their multipart framing. */
  sentryChunks: 33 * MiB,
  /** The JSON bodies of sentry-cli and the bundler plugins (assemble requests, releases). */
  sentryJson: 1 * MiB,
  /** Server-agent reports (`/agent/v1/report`): at most 1,000 samples, a few hundred bytes each (more with many filesystems). */
  agent: 4 * MiB,
  /** Heartbeat pings: the body is read and dropped. */
  ping: 100 * KiB,
  /** A confirmation link followed by POST: the body is read and dropped. */
  confirm: 10 * KiB,
  /** The agent server (`POST /mcp`): JSON-RPC messages, a tool call carrying at most an `api` body in its envelope. */
  mcp: 9 * MiB,
  /** Forms of public pages: status pages (password, subscribe, unsubscribe), invitations. */
  statusPageForm: 16 * KiB,
} as const;

/** 413: the body is over `limit` bytes (decompressed). */
export function bodyTooLarge(limit: number): ApiError {
  return new ApiError(413, 'payload_too_large', `The request body is larger than ${limit} bytes.`, { limit: String(limit) },
    [{ field: 'body', reason: `larger than ${limit} bytes` }]);
}

function unsupportedEncoding(encoding: string): ApiError {
  return new ApiError(400, 'unsupported_encoding', 'Content-Encoding must be gzip, deflate, br, zstd or identity.', { encoding: encoding.slice(0, 40) },
    [{ field: 'Content-Encoding', reason: 'unsupported' }]);
}

function undecodable(): ApiError {
  return new ApiError(400, 'invalid_body', 'The request body could not be decompressed.', {}, [{ field: 'body', reason: 'not valid for its Content-Encoding' }]);
}

type Inflate = (buf: Buffer, limit: number) => Promise<Buffer>;

type Codec = [async: typeof zlib.gunzip | typeof zlib.inflate | typeof zlib.brotliDecompress, sync: typeof zlib.gunzipSync | typeof zlib.inflateSync | null];

/**
 * Most that a body is decompressed to on the event loop itself: a small body
 * (an error event, a ping) decompresses in a third of the CPU synchronously
 * than through the thread pool, and this bounds how long a hostile one (a
 * few bytes that expand without end) can hold the loop (under a
 * millisecond for gzip and deflate); a body that turns out larger is
 * decompressed again in the thread pool.
 */
const SYNC_OUTPUT = 128 * KiB;
/** Compressed bodies over this go to the thread pool at once. */
const SYNC_INPUT = 256 * KiB;

const tooLargeOrUndecodable = (e: unknown, limit: number) =>
  ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError ? bodyTooLarge(limit) : undecodable());

/**
 * Decompresses a whole body at once, at most `limit` bytes out: on the event
 * loop while small, else (and brotli always: a brotli decoder costs ~8 ms
 * whatever it is given) in the thread pool.
 */
const oneShot = ([f, fSync]: Codec): Inflate => (buf, limit) => {
  if (fSync && buf.length <= SYNC_INPUT) {
    try {
      return Promise.resolve((fSync as (b: Buffer, o: zlib.ZlibOptions) => Buffer)(buf, { maxOutputLength: Math.min(limit, SYNC_OUTPUT) }));
    } catch (e) {
      if (limit <= SYNC_OUTPUT || !((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError)) return Promise.reject(tooLargeOrUndecodable(e, limit));
    }
  }
  return new Promise((resolve, reject) => {
    (f as (b: Buffer, o: zlib.ZlibOptions, cb: (e: Error | null, r: Buffer) => void) => void)(buf, { maxOutputLength: limit }, (e, r) => {
      if (!e) return resolve(r);
      reject(tooLargeOrUndecodable(e, limit));
    });
  });
};

/**
 * zstd (Relay accepts it; Node 20's zlib has none): fzstd, pure JavaScript,
 * on the event loop, block by block (128 KiB at most each), stopped as soon
 * as the output passes `limit`.
 */
const zstd: Inflate = async (buf, limit) => {
  const out: Uint8Array[] = [];
  let size = 0;
  const over = new Error('over');
  try {
    new ZstdDecompress((chunk) => {
      size += chunk.length;
      if (size > limit) throw over;
      out.push(chunk);
    }).push(buf, true);
  } catch (e) {
    throw e === over ? bodyTooLarge(limit) : undecodable();
  }
  return Buffer.concat(out, size);
};

function decoderFor(header: string | undefined): Inflate | null {
  const encoding = (header ?? '').trim().toLowerCase();
  switch (encoding) {
    // `UTF-8` is what old sentry-java sends as an encoding (Relay ignores it, and so do we).
    case '': case 'identity': case 'utf-8': case 'utf8': return null;
    case 'gzip': case 'x-gzip': return oneShot([zlib.gunzip, zlib.gunzipSync]);
    case 'deflate': return oneShot([zlib.inflate, zlib.inflateSync]);
    case 'br': return oneShot([zlib.brotliDecompress, null]);
    case 'zstd': return zstd;
    default: throw unsupportedEncoding(encoding);
  }
}

/** How long, and how much more, a refused body is drained for before its connection is cut. */
const DRAIN_MS = 5_000;
const DRAIN_BYTES = 256 * MiB;

const draining = new WeakSet<IncomingMessage>();

/**
 * Called when a request is answered before its body was read (a refusal):
 * the rest of the body is read and dropped, holding nothing, so the client
 * gets the answer instead of a reset while it is still sending. The
 * connection is kept open for that (Node would otherwise close it at once
 * and the client's pending write would fail before it read the answer); a
 * body that keeps coming past `DRAIN_MS` or `DRAIN_BYTES` gets its
 * connection cut.
 */
export function drainUnread(req: IncomingMessage): void {
  if (req.complete || draining.has(req)) return;
  draining.add(req);
  req.unpipe();
  const res = (req as { res?: { headersSent: boolean; shouldKeepAlive: boolean } }).res;
  if (res && !res.headersSent) res.shouldKeepAlive = true;
  let drained = 0;
  const cut = () => { req.socket?.destroy(); };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => { drained += chunk.length; if (drained > DRAIN_BYTES) cut(); });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/**
 * Reads a request body, decompressing it as its `Content-Encoding` says:
 * at most `limit` bytes are read from the wire (nothing past it is read or
 * held), then decompressed whole in the thread pool to at most `limit`
 * bytes (a bomb stops there). Throws 413 `payload_too_large` over the
 * limit, 400 `unsupported_encoding` or `invalid_body` for a body that cannot
 * be decoded. An empty or absent body is an empty buffer.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  let decoder: Inflate | null;
  try {
    decoder = decoderFor(req.headers['content-encoding']);
  } catch (e) {
    drainUnread(req);
    return Promise.reject(e);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    drainUnread(req);
    return Promise.reject(bodyTooLarge(limit));
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: ApiError | null) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('error', onAbort);
      req.off('aborted', onAbort);
      if (err) {
        drainUnread(req);
        reject(err);
      } else if (decoder) {
        // The wire bytes are in (at most `limit`): decompress them whole, at most `limit` bytes out.
        decoder(Buffer.concat(chunks, size), limit).then(resolve, reject);
      } else {
        resolve(Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) return finish(bodyTooLarge(limit));
      chunks.push(chunk);
    };
    const onAbort = () => finish(new ApiError(400, 'invalid_body', 'The request body ended before it was complete.', {}, [{ field: 'body', reason: 'incomplete' }]));
    req.on('data', onData);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
    req.on('end', () => finish(null));
  });
}

/** A small form or JSON body of a public page, parsed (`application/x-www-form-urlencoded`, or JSON: its string fields). */
export async function readForm(req: IncomingMessage, limit: number): Promise<Record<string, string>> {
  const raw = (await readBody(req, limit)).toString('utf8');
  if (/^application\/json\b/i.test(String(req.headers['content-type'] ?? ''))) {
    try {
      const j = JSON.parse(raw) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(j ?? {}).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    } catch {
      throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.', {}, [{ field: 'body', reason: 'is not valid JSON' }]);
    }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}
