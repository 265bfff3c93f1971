import express, { type Request, type Response, type Router } from 'express';
import type { Db } from '../db/connect';
import { recordPing, type PingKind } from '../engine/ping';
import { ApiError } from '../pipeline/errors';
import { sendBytes, sendError } from './respond';
import { BODY_LIMITS, readBody } from './body';

/**
 * Heartbeat pings at `/ping/<token>`, `/ping/<token>/fail` and
 * `/ping/<token>/start`, by GET, POST or HEAD. The URL is the credential; an
 * unknown token is 404. A POST body is accepted and ignored.
 */
export function pingRouter(db: Db, log: (msg: string, e: unknown) => void): Router {
  const router = express.Router();
  const handle = (kind: PingKind) => async (req: Request, res: Response) => {
    try {
      // A POST body is read (within its small limit) and dropped.
      if (req.method === 'POST') await readBody(req, BODY_LIMITS.ping);
      if (!(await recordPing(db, String(req.params.token), kind))) throw new ApiError(404, 'not_found', 'No monitor has this ping URL.');
      sendBytes(req, res, 200, 'text/plain; charset=utf-8', 'OK');
    } catch (e) {
      sendError(req, res, e, log);
    }
  };
  for (const [suffix, kind] of [['', 'success'], ['/fail', 'fail'], ['/start', 'start']] as const) {
    router.get(`/:token${suffix}`, handle(kind));
    router.head(`/:token${suffix}`, handle(kind));
    router.post(`/:token${suffix}`, handle(kind));
  }
  return router;
}
