import type { IncomingMessage, ServerResponse } from 'node:http';

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
