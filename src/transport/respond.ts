import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import type { Request, Response } from 'express';
import { ApiError } from '../pipeline/errors';
import { databaseAnswer } from '../pipeline/dbErrors';
import { drainUnread } from './body';

export const PROTOBUF = 'application/x-protobuf';

/** Headers every API response carries, errors included (spec: Endpoints conventions). */
export function commonHeaders(res: Response): void {
  res.setHeader('Vary', 'Accept, Content-Type');
  res.setHeader('Cache-Control', 'private, no-store');
}

/**
 * The q-value a header (Accept, Accept-Encoding) gives each listed name,
 * lower-cased: `a/b;q=0.5, c/d` → {a/b: 0.5, c/d: 1}.
 */
export function qualities(header: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((p) => p.startsWith('q='));
    const value = q ? Number(q.slice(2)) : 1;
    out.set(name, Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0);
  }
  return out;
}

/**
 * True when the answer is protobuf (spec: JSON unless `application/x-protobuf`
 * is asked for; a protobuf request is answered in protobuf). Asked for: listed
 * in Accept with a q above 0 and not below JSON's; a protobuf request body
 * counts as asking unless Accept refuses protobuf outright (q=0).
 */
export function wantsProtobuf(req: Request): boolean {
  const accept = qualities(req.headers.accept);
  const pb = accept.get(PROTOBUF);
  if (String(req.headers['content-type'] ?? '').startsWith(PROTOBUF)) return pb !== 0;
  if (pb === undefined || pb === 0) return false;
  return pb >= (accept.get('application/json') ?? 0);
}

/** True when the client accepts gzip (listed, or `*`, with a q above 0). */
export function acceptsGzip(req: Request): boolean {
  const enc = qualities(String(req.headers['accept-encoding'] ?? ''));
  const q = enc.get('gzip') ?? enc.get('*');
  return q !== undefined && q > 0;
}

/** Sends `body` with its type, gzip-compressed when the client accepts it. */
export function sendBytes(req: Request, res: Response, status: number, contentType: string, body: Buffer | Uint8Array | string): void {
  commonHeaders(res);
  let buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (buf.length > 0 && acceptsGzip(req)) {
    buf = zlib.gzipSync(buf, { level: 6 });
    res.setHeader('Content-Encoding', 'gzip');
  }
  res.status(status).setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', String(buf.length));
  res.end(buf);
}

/** Sends a JSON value. */
export function sendJson(req: Request, res: Response, status: number, value: unknown): void {
  sendBytes(req, res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

/** Renders any thrown value as the spec's error body (JSON whatever the Accept). */
export function sendError(req: Request, res: Response, err: unknown, log?: (msg: string, e: unknown) => void): void {
  const e = asApiError(err, log);
  drainUnread(req);
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
  sendJson(req, res, e.status, e.toBody());
}

/**
 * The error as the API answers it, whatever the transport (REST, Connect,
 * MCP): an ApiError as it is; a database failure as what it means to the
 * client (src/pipeline/dbErrors.ts: a vanished parent 404, a conflict 409,
 * an unavailable database 503 — never 500); input PostgreSQL refused a 400;
 * anything else a logged 500.
 */
export function asApiError(err: unknown, log?: (msg: string, e: unknown) => void): ApiError {
  if (err instanceof ApiError) return err;
  const answer = databaseAnswer(err);
  if (answer) {
    // Not a fault of the code, but worth seeing: a race the domain could answer itself, or a database out of breath.
    log?.(`database: ${answer.code} answered ${answer.status}`, err);
    return answer;
  }
  return internal(err, log);
}

function internal(err: unknown, log?: (msg: string, e: unknown) => void): ApiError {
  // PostgreSQL's data exceptions (class 22: a value out of range, not valid text, …) come from input
  // no check caught: still a client error, and logged so that the missing check gets written.
  const sqlState = (err as { code?: unknown } | null)?.code;
  if (typeof sqlState === 'string' && /^22[0-9A-Z]{3}$/.test(sqlState)) {
    log?.('input reached the database unchecked', err);
    return new ApiError(400, 'invalid_input', 'A value in the request cannot be stored or compared as given.', {}, [{ field: 'body', reason: 'not a value the database accepts' }]);
  }
  log?.('unhandled error', err);
  return new ApiError(500, 'internal', 'Something went wrong on our side; it has been logged.');
}

/**
 * Answers a request Node's HTTP parser refused before any route saw it (an
 * unknown method, bytes not allowed in the target, headers too large) with the
 * error body and headers every answer carries, instead of Node's bare 400.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify(new ApiError(status, status === 400 ? 'bad_request' : status === 431 ? 'headers_too_large' : 'request_timeout',
    status === 400 ? 'The request is not valid HTTP (method, target or headers).' : status === 431 ? 'The request headers are too large.' : 'The request took too long to arrive.').toBody());
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nVary: Accept, Content-Type\r\nCache-Control: private, no-store\r\nConnection: close\r\n\r\n${body}`);
}
