import zlib from 'node:zlib';
import type { Request, Response } from 'express';
import { ApiError } from '../pipeline/errors';

export const PROTOBUF = 'application/x-protobuf';

/** Headers every API response carries, errors included (spec: Endpoints conventions). */
export function commonHeaders(res: Response): void {
  res.setHeader('Vary', 'Accept, Content-Type');
  res.setHeader('Cache-Control', 'private, no-store');
}

/** True when the client asked for a protobuf answer (Accept, or a protobuf request body). */
export function wantsProtobuf(req: Request): boolean {
  const accept = req.headers.accept ?? '';
  if (accept.includes(PROTOBUF)) return true;
  const ct = req.headers['content-type'] ?? '';
  return ct.startsWith(PROTOBUF) && !/application\/json/.test(accept);
}

/** Sends `body` with its type, gzip-compressed when the client accepts it. */
export function sendBytes(req: Request, res: Response, status: number, contentType: string, body: Buffer | Uint8Array | string): void {
  commonHeaders(res);
  let buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) && buf.length > 0) {
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
  const e = err instanceof ApiError ? err : internal(err, log);
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
  sendJson(req, res, e.status, e.toBody());
}

function internal(err: unknown, log?: (msg: string, e: unknown) => void): ApiError {
  log?.('unhandled error', err);
  return new ApiError(500, 'internal', 'Something went wrong on our side; it has been logged.');
}
