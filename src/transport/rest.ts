import express, { type Request, type Response, type Router } from 'express';
import { routes, type RouteDef } from '../../gen/routes';
import { ApiError } from '../pipeline/errors';
import type { Runner } from '../pipeline/run';
import { PROTOBUF, sendBytes, sendError, sendJson, wantsProtobuf } from './respond';
import { messageDesc } from './registry';
import { decodeRequest, encodeMessage } from './wire';
import { fillAbsentLists } from './absentLists';
import { BODY_LIMITS, readBody } from './body';
import { credentialsOf } from './credentials';
import { ABSOLUTE_DAYS, SESSION_COOKIE } from '../auth/sessions';
import { bufferedFile, sendFile, type FileAnswer } from './fileAnswer';
import { isEventStream, sendEventStream } from './eventStream';


function queryOf(req: Request): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.query)) out[k] = Array.isArray(v) ? v[v.length - 1] : v;
  return out;
}

/** Decodes the request body by its content type: JSON (default) or protobuf. */
function decodeBody(route: RouteDef, req: Request, raw: Buffer, query: Record<string, unknown>): unknown {
  const protobuf = String(req.headers['content-type'] ?? '').startsWith(PROTOBUF);
  // An empty protobuf message is all fields absent, not no body.
  if (raw.length === 0 && !(protobuf && route.body !== 'none')) return undefined;
  if (route.rawRequest) return raw;
  const ct = String(req.headers['content-type'] ?? '');
  if (ct.startsWith(PROTOBUF)) {
    let decoded: Record<string, unknown>;
    try {
      decoded = decodeRequest(messageDesc(route.requestMessage), raw);
    } catch {
      throw new ApiError(400, 'invalid_protobuf', `The body is not a valid ${route.requestMessage} message.`, {}, [{ field: 'body', reason: 'is not a valid protobuf message' }]);
    }
    // Path and URL query values travel in the URL; the body keeps the rest.
    for (const p of route.pathParams) delete decoded[p];
    for (const q of route.queryParams) if (q.name in query) delete decoded[q.name];
    return fillAbsentLists(route, decoded);
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.', {}, [{ field: 'body', reason: 'is not valid JSON' }]);
  }
}

/** Sets the session cookie for `token` (HttpOnly, SameSite Lax, Secure over HTTPS); also for the server's own link pages. */
export function setSessionCookie(req: Request, res: Response, token: string): void {
  const secure = req.secure || String(req.headers['x-forwarded-proto'] ?? '').split(',')[0].trim() === 'https' ? '; Secure' : '';
  res.append('Set-Cookie', `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${ABSOLUTE_DAYS * 86_400}; HttpOnly; SameSite=Lax${secure}`);
}

/**
 * The session cookie of sign-in and sign-up (`x-session-cookie: set`), and
 * its clearing when the current session ends (`clear`). HttpOnly, SameSite
 * Lax, Secure when the request came over HTTPS (directly or via a proxy).
 */
function sessionCookie(route: RouteDef, req: Request, res: Response, result: unknown): void {
  const data = (result as { data?: { token?: string; current?: boolean; signedIn?: { token?: string } | null } } | null)?.data;
  if (!route.sessionCookie || !data) return;
  const secure = req.secure || String(req.headers['x-forwarded-proto'] ?? '').split(',')[0].trim() === 'https' ? '; Secure' : '';
  // Sign-in and sign-up answer the grant itself; a reset or an accepted invitation that signs in answers it as `signedIn`.
  const token = data.token ?? data.signedIn?.token;
  if (route.sessionCookie === 'set' && token) {
    setSessionCookie(req, res, token);
  } else if (route.sessionCookie === 'clear' && data.current) {
    res.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure}`);
  }
}

/**
 * Writes an operation's result. A file (raw response) goes as itself,
 * streamed when the handler streams it; asked for in protobuf, it is the
 * operation's message carrying the file (built in memory).
 */
async function sendResult(route: RouteDef, req: Request, res: Response, result: unknown, log: (msg: string, e: unknown) => void): Promise<void> {
  sessionCookie(route, req, res, result);
  // An event stream is text/event-stream whatever the Accept header asks (it has no end to buffer).
  if (route.rawResponse && isEventStream(result)) {
    await sendEventStream(req, res, result, log);
  } else if (route.rawResponse && wantsProtobuf(req)) {
    sendBytes(req, res, route.successStatus, PROTOBUF, encodeMessage(messageDesc(route.responseMessage), await bufferedFile(result as FileAnswer)));
  } else if (route.rawResponse) {
    await sendFile(req, res, route.successStatus, result as FileAnswer, log);
  } else if (wantsProtobuf(req)) {
    sendBytes(req, res, route.successStatus, PROTOBUF, encodeMessage(messageDesc(route.responseMessage), result as Record<string, unknown>));
  } else {
    sendJson(req, res, route.successStatus, result);
  }
}

/** The `/api/v1` router: every operation of the contract through the one runner. */
export function restRouter(runner: Runner, log: (msg: string, e: unknown) => void): Router {
  const router = express.Router();
  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](route.expressPath, async (req: Request, res: Response) => {
      try {
        res.locals.operationId = route.operationId;
        // Refusals that need no body come before a byte of it is read.
        const credentials = credentialsOf(req);
        const caller = await runner.admit(route, credentials);
        res.locals.organizationId = caller.organizationId;
        const bytes = await readBody(req, route.operationId === 'uploadSymbols' ? BODY_LIMITS.symbols : BODY_LIMITS.api);
        const query = queryOf(req);
        let body: unknown;
        let bodyError: ApiError | undefined;
        try {
          body = decodeBody(route, req, bytes, query);
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          bodyError = e;
        }
        const headers: Record<string, string | undefined> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
        const result = await runner.execute(route, {
          credentials,
          path: req.params as Record<string, string>,
          query,
          body,
          headers,
          bodyError,
        }, caller);
        await sendResult(route, req, res, result, log);
      } catch (err) {
        sendError(req, res, err, log);
      }
    });
  }
  router.use((req: Request, res: Response) => {
    sendJson(req, res, 404, new ApiError(404, 'not_found', `No route ${req.method} ${req.baseUrl}${req.path}.`).toBody());
  });
  return router;
}
