import type { IncomingMessage, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import express, { type Request, type Response, type Router } from 'express';
import type { Db } from '../db/connect';
import type { PingKind } from '../engine/ping';
import { pingIngestFor, type PingIngest } from '../ingest/pings';
import type { Logger } from '../log';
import { ApiError } from '../pipeline/errors';
import { qualities, sendBytes, sendError } from './respond';
import { BODY_LIMITS, readBody } from './body';
import { withFastPath, type Listener } from './fastPath';

type Log = (msg: string, e: unknown) => void;

/** Answers one ping (the token and kind taken from the path). */
async function answer(pings: PingIngest, req: Request, res: Response, token: string, kind: PingKind, log: Log): Promise<void> {
  try {
    // A POST body is read (within its small limit) and dropped.
    if (req.method === 'POST') await readBody(req, BODY_LIMITS.ping);
    if (!(await pings.record(token, kind))) throw new ApiError(404, 'not_found', 'No monitor has this ping URL.');
    sendBytes(req, res, 200, 'text/plain; charset=utf-8', 'OK');
  } catch (e) {
    sendError(req, res, e, log);
  }
}

/**
 * Heartbeat pings at `/ping/<token>`, `/ping/<token>/fail` and
 * `/ping/<token>/start`, by GET, POST or HEAD. The URL is the credential; an
 * unknown token is 404. A POST body is accepted and ignored. A ping is
 * answered once it is committed to the ping buffer (src/ingest/pings.ts);
 * the monitor's status follows within a second, from a worker. A ping in
 * flight at shutdown is committed before its connection closes (the server
 * drains connections before it closes the database).
 */
export function pingRouter(db: Db, log: Log): Router {
  const router = express.Router();
  const pings = pingIngestFor(db);
  const handle = (kind: PingKind) => (req: Request, res: Response) => answer(pings, req, res, String(req.params.token), kind, log);
  for (const [suffix, kind] of [['', 'success'], ['/fail', 'fail'], ['/start', 'start']] as const) {
    router.get(`/:token${suffix}`, handle(kind));
    router.head(`/:token${suffix}`, handle(kind));
    router.post(`/:token${suffix}`, handle(kind));
  }
  return router;
}

/** A ping path as clients send it (any other spelling — case, percent-encoding — is left to the app's router). */
const PING_PATH = /^\/ping\/(hb_[A-Za-z0-9_-]{43})(\/fail|\/start)?\/?(?:\?.*)?$/;
const KINDS: Record<string, PingKind> = { '': 'success', '/fail': 'fail', '/start': 'start' };
const OK = Buffer.from('OK', 'utf8');
const OK_GZIP = zlib.gzipSync(OK, { level: 6 });

/** The 200 answer, byte for byte what `sendBytes` sends through the app. */
function sendOk(req: IncomingMessage, res: ServerResponse): void {
  const enc = qualities(String(req.headers['accept-encoding'] ?? ''));
  const q = enc.get('gzip') ?? enc.get('*');
  const gzip = q !== undefined && q > 0;
  res.setHeader('Vary', 'Accept, Content-Type');
  res.setHeader('Cache-Control', 'private, no-store');
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', String(gzip ? OK_GZIP.length : OK.length));
  res.end(gzip ? OK_GZIP : OK);
}

export interface PingFastPathDeps { db: Db; logger: Logger; closing: () => boolean; baseUrl: () => string }

/**
 * The server's request listener: `app`, except that pings are answered
 * without it. Pings are the requests Vigil takes the most of, and Express
 * costs several times the ping itself: its router, and above all its
 * per-request change of the request's and response's prototypes (which
 * leaves V8 unable to optimise the HTTP code they run through). Here the
 * answer is made on Node's own objects, the same as through the app:
 * `requestObserver` runs (request id, `Connection: close` once shutdown
 * began, the log line, the metrics), a 200 carries the headers `sendBytes`
 * sets; anything else (404, 413, a failure) is answered through Express's
 * objects by `sendError`, as the router would. Only a ping to Vigil's own
 * host (or to an address, or localhost) is taken here: any other host may be
 * a status page's custom domain, where the app serves that page and nothing
 * else.
 */
export function withPingFastPath(app: express.Express, deps: PingFastPathDeps): Listener {
  const pings = pingIngestFor(deps.db);
  const log: Log = (m, e) => deps.logger.error(m, e);
  /** The error answer through Express's request and response, as app.handle would have made them. */
  const fail = (req: IncomingMessage, res: ServerResponse, e: unknown) => {
    const r = req as Request;
    const s = res as Response;
    r.res = s;
    s.req = r;
    Object.setPrototypeOf(r, app.request);
    Object.setPrototypeOf(s, app.response);
    sendError(r, s, e, log);
  };
  const take = async (req: IncomingMessage, res: ServerResponse, token: string, kind: PingKind) => {
    try {
      // A POST body is read (within its small limit) and dropped.
      if (req.method === 'POST') await readBody(req, BODY_LIMITS.ping);
      if (!(await pings.record(token, kind))) throw new ApiError(404, 'not_found', 'No monitor has this ping URL.');
      sendOk(req, res);
    } catch (e) {
      fail(req, res, e);
    }
  };
  return withFastPath(app, deps, (req) => {
    const m = req.method === 'GET' || req.method === 'HEAD' || req.method === 'POST' ? PING_PATH.exec(req.url ?? '') : null;
    return m ? (rq, rs) => void take(rq, rs, m[1], KINDS[m[2] ?? '']) : null;
  });
}
