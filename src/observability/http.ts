/**
 * Every request, once: its id (a sane `X-Request-Id` is kept, else one is
 * made; echoed either way), one log line when it ends, and the request
 * metrics. Transports name the operation in `res.locals.operationId` and the
 * caller's organisation in `res.locals.organizationId`; other routes are
 * counted by area, never by raw path (paths carry tokens and ids).
 */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log';
import { metrics } from './metrics';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The area of a request that no operation claimed, from its first path segment. */
const AREAS: Record<string, string> = {
  status: 'status_page', ping: 'ping', feeds: 'feed', confirm: 'confirm', probe: 'probe', rpc: 'connect', api: 'api',
  invitations: 'invitation', 'password-reset': 'password_reset', metrics: 'metrics', healthz: 'health', readyz: 'health', 'openapi.json': 'contract', tls: 'tls_ask', mcp: 'mcp', docs: 'docs',
};

function areaOf(req: Request, res: Response): string {
  if (res.locals.operationId) return String(res.locals.operationId);
  if (res.locals.statusSlug) return 'status_page';
  const p = req.originalUrl;
  const first = p.split(/[/?]/)[1] ?? '';
  if (first === 'api' && p.startsWith('/api/proto')) return 'contract';
  return AREAS[first] ?? 'other';
}

/**
 * The path as it may be logged: no query (it may carry keys), and the
 * segments that are credentials (ping tokens, feed tokens, confirmation and
 * unsubscribe links) masked.
 */
export function loggablePath(req: Request): string {
  // originalUrl: a router mounted at a prefix rewrites req.path while it runs.
  const p = req.originalUrl.split('?', 1)[0];
  return p
    .replace(/^\/ping\/[^/]+/, '/ping/…')
    .replace(/^\/feeds\/incidents\/[^/]+/, '/feeds/incidents/…')
    .replace(/^\/confirm\/[^/]+/, '/confirm/…')
    .replace(/^\/invitations\/[^/]+/, '/invitations/…')
    .replace(/^\/password-reset\/(?!confirm$)[^/]+/, '/password-reset/…')
    .replace(/\/subscribers\/confirm\/[^/]+/, '/subscribers/confirm/…')
    .replace(/\/unsubscribe\/([^/]+)\/[^/]+/, '/unsubscribe/$1/…')
    .slice(0, 300);
}

/**
 * The middleware; `closing()` is true once shutdown began (answers then ask
 * the client to reconnect elsewhere). With `volume` (the ingestion fast
 * paths: analytics events, error events, heartbeat pings, thousands a
 * second), a success is logged at debug, not info: a line per event would
 * cost more than the event (a synchronous write each) and drown every other
 * line; refusals and failures are logged as anywhere, and the metrics count
 * every request.
 */
export function requestObserver(log: Logger, closing: () => boolean, o: { volume?: boolean } = {}) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const reqId = typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
    res.locals.reqId = reqId;
    res.setHeader('X-Request-Id', reqId);
    if (closing()) res.setHeader('Connection', 'close');
    let done = false;
    const end = (aborted: boolean) => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const operation = areaOf(req, res);
      const status = aborted && !res.headersSent ? 499 : res.statusCode;
      metrics.httpRequests.inc({ operation, method: req.method, status: String(status) });
      metrics.httpDuration.observe({ operation, method: req.method }, seconds);
      const level = status >= 500 ? 'warn' : o.volume && status < 400 ? 'debug' : 'info';
      if (level !== 'warn' && !log.enabled(level)) return;
      const fields = {
        reqId, method: req.method, path: loggablePath(req), operationId: res.locals.operationId ?? null, status,
        durationMs: Math.round(seconds * 10_000) / 10, organizationId: res.locals.organizationId ?? null, ...(aborted ? { aborted: true } : {}),
      };
      log[level]('request', fields);
    };
    res.once('finish', () => end(false));
    res.once('close', () => end(!res.writableFinished));
    next();
  };
}
