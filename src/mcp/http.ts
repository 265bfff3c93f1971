import fs from 'node:fs';
import path from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Express, Request, Response } from 'express';
import { authenticate } from '../auth/authenticate';
import type { Db } from '../db/connect';
import { ROOT } from '../paths';
import { ApiError } from '../pipeline/errors';
import type { RateLimits } from '../pipeline/ratelimit';
import type { Credentials, Runner } from '../pipeline/run';
import { BODY_LIMITS, readBody } from '../transport/body';
import { credentialsOf } from '../transport/credentials';
import { commonHeaders, qualities, sendError } from '../transport/respond';
import { agentServer } from './server';
import { contractTools, type ToolDef } from './tools';

/** What the agent server reaches: the runner every transport uses, and what it needs before the runner. */
export interface McpDeps {
  db: Db;
  limits: RateLimits;
  runner: Runner;
  log: (msg: string, e: unknown) => void;
}

function version(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0';
  }
}

function parseMessage(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid JSON.', {}, [{ field: 'body', reason: 'is not valid JSON' }]);
  }
}

/**
 * The bucket each tool call of the body spends for itself: a `tools/call`
 * of a write tool spends W ("a write spends the write limit"), any other
 * call R. This is the first of a tool call's two counts ("counted twice,
 * once for the call and once for the request inside it"); the request
 * inside it spends its operation's own bucket in the runner. The protocol's
 * own messages (`initialize`, its notification, `tools/list`, `ping`) are
 * no tool call and spend nothing, so that a call costs exactly two whatever
 * the client did before it.
 */
export function callBuckets(message: unknown, byName: ReadonlyMap<string, ToolDef>): Array<'R' | 'W'> {
  const messages = Array.isArray(message) ? message : [message];
  return messages.flatMap((m): Array<'R' | 'W'> => {
    const { method, params } = (m ?? {}) as { method?: unknown; params?: { name?: unknown } };
    if (method !== 'tools/call') return [];
    return [typeof params?.name === 'string' ? byName.get(params.name)?.callBucket ?? 'R' : 'R'];
  });
}

/** Sets request header `name` to `value` in both of Node's views of the headers (the SDK reads the raw list). */
function setHeader(req: Request, name: string, value: string): void {
  req.headers[name] = value;
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i].toLowerCase() === name) raw.splice(i, 2);
  raw.push(name, value);
}

/**
 * What the SDK's transport insists on, given to a request that already
 * qualifies: the body was parsed as JSON here (whatever its Content-Type,
 * as the REST API reads a body that is not protobuf as JSON), and the answer
 * is always JSON, never an event stream, so a client that accepts JSON
 * (`application/json` alone, any type, or no Accept at all) is answered
 * rather than refused 406 for not also listing `text/event-stream`. A
 * client that accepts no JSON keeps its header and gets the SDK's 406.
 */
function asMcpRequest(req: Request): void {
  setHeader(req, 'content-type', 'application/json');
  const accept = req.headers.accept;
  const q = qualities(accept);
  const json = !accept || ['application/json', 'application/*', '*/*'].some((t) => (q.get(t) ?? 0) > 0);
  if (json) setHeader(req, 'accept', 'application/json, text/event-stream');
}

/**
 * `POST /mcp`: the agent server (Model Context Protocol, Streamable HTTP,
 * stateless, JSON answers). The key is checked first (401 as on the REST
 * API), then the body is read within its limit, each message is counted
 * against the organisation's rate limit (429 before any of it runs), and a
 * server made for this request answers it. Nothing is streamed: `GET` and
 * `DELETE` (an event stream, a session to end) are 405.
 */
export function mountMcp(app: Express, deps: McpDeps): void {
  const { tools, byName } = contractTools();
  const serverVersion = version();
  app.post('/mcp', async (req: Request, res: Response) => {
    try {
      // The bearer key only: a cookie never signs an agent's request.
      const credentials: Credentials = { ...credentialsOf(req), cookie: undefined };
      const caller = await authenticate(deps.db, credentials.authorization);
      res.locals.organizationId = caller.organizationId;
      const message = parseMessage(await readBody(req, BODY_LIMITS.mcp));
      for (const bucket of callBuckets(message, byName)) await deps.limits.consume(caller.organizationId, bucket);
      asMcpRequest(req);
      commonHeaders(res);
      const server = agentServer(tools, byName, { runner: deps.runner, credentials, log: deps.log }, serverVersion);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, message);
    } catch (err) {
      if (!res.headersSent) sendError(req, res, err, deps.log);
      else deps.log('mcp request failed after its answer began', err);
    }
  });
  app.all('/mcp', (req: Request, res: Response) => {
    res.setHeader('Allow', 'POST');
    sendError(req, res, new ApiError(405, 'method_not_allowed', 'The agent server takes POST only: it is a protocol endpoint, not an event source, and keeps no session.'));
  });
}
