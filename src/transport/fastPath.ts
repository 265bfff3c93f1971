import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import type { Logger } from '../log';
import { requestObserver } from '../observability/http';

/** Hosts that cannot be a status page's custom domain (as src/statuspages/public.ts tells them apart). */
const LOCAL_HOST = /^(localhost|\[?[0-9a-f:.]+\]?)(:\d+)?$/;

/**
 * Whether a request is addressed to Vigil itself: its own host (BASE_URL's,
 * read anew when it changes), an address, localhost, or no Host at all. The
 * fast paths that skip Express (pings, analytics events) take only these:
 * any other host may be a status page's custom domain, where the app serves
 * that page and nothing else.
 */
export function ownHostTest(baseUrl: () => string): (req: IncomingMessage) => boolean {
  let seen: string | null = null;
  let own = '';
  return (req) => {
    const u = baseUrl();
    if (u !== seen) {
      seen = u;
      try { own = new URL(u).host.toLowerCase(); } catch { own = ''; }
    }
    const host = String(req.headers.host ?? '').toLowerCase();
    return host === '' || host === own || LOCAL_HOST.test(host);
  };
}

/**
 * Gives Node's request and response what `requestObserver` reads of
 * Express's additions, and the response an unread body's drain keeps open
 * (body.ts), so a fast path answers exactly as the app would.
 */
export function asExpressEnough(req: IncomingMessage, res: ServerResponse): void {
  (req as { originalUrl?: string }).originalUrl = req.url;
  (req as { res?: ServerResponse }).res = res;
  (res as { locals?: object }).locals = {};
}

/** A server request listener. */
export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export interface FastPathDeps { logger: Logger; closing: () => boolean; baseUrl: () => string }

/**
 * The server's listener with one fast path before `next`: `route` names the
 * handler of a request it takes (null: `next` answers it, as it does any
 * request to another host, which may be a status page's custom domain).
 * A taken request gets what Express would have given it (`asExpressEnough`)
 * and goes through `requestObserver` (request id, log line — at debug for a
 * success: these are the volume paths —, metrics,
 * `Connection: close` once shutdown began), so it is answered as through the
 * app. Pings, analytics events and error events take this road.
 */
export function withFastPath(next: Listener, deps: FastPathDeps, route: (req: IncomingMessage) => Listener | null): Listener {
  const observe = requestObserver(deps.logger, deps.closing, { volume: true });
  const forUs = ownHostTest(deps.baseUrl);
  return (req, res) => {
    const handle = route(req);
    if (!handle || !forUs(req)) return next(req, res);
    asExpressEnough(req, res);
    observe(req as Request, res as Response, () => handle(req, res));
  };
}
