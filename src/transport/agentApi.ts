import express, { type Request, type Response, type Router } from 'express';
import type { Db } from '../db/connect';
import { agentIngestFor, unavailable } from '../ingest/agents';
import { ApiError } from '../pipeline/errors';
import { sendError, sendJson } from './respond';
import { BODY_LIMITS, readBody } from './body';

/** The JSON body of a report. */
function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.', {}, [{ field: 'body', reason: 'is not valid JSON' }]);
  }
}

/**
 * The server-agent protocol at `/agent/v1` (docs/agents.md), authenticated by
 * the agent's own token (`Authorization: Bearer ag_…`), checked before a
 * byte of the body is read: `POST /report` takes the agent's identity and
 * samples and answers `200 {accepted, dropped}` once they are committed to
 * the ingestion buffer. An unknown or deleted agent's token is 401; a
 * malformed report 400 naming the field; 503 when the database is away (the
 * agent keeps its samples and retries).
 */
export function agentRouter(db: Db, log: (msg: string, e: unknown) => void): Router {
  const router = express.Router();
  const ingest = agentIngestFor(db);
  router.post('/report', async (req: Request, res: Response) => {
    try {
      const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      let agentId: string | null;
      try {
        agentId = await ingest.agentOf(token);
      } catch (e) {
        log('finding the agent of a report', e);
        throw unavailable();
      }
      if (!agentId) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="agent"');
        throw new ApiError(401, 'unauthorized', 'Missing, unknown or revoked agent token.');
      }
      const body = parseJson(await readBody(req, BODY_LIMITS.agent));
      try {
        sendJson(req, res, 200, await ingest.record(agentId, body));
      } catch (e) {
        if (e instanceof ApiError) throw e;
        log('recording an agent report', e);
        throw unavailable();
      }
    } catch (e) {
      sendError(req, res, e, log);
    }
  });
  return router;
}
