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
import { commonHeaders, sendError } from '../transport/respond';
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
 * The bucket each JSON-RPC message of the body spends for itself: a
 * `tools/call` of a write tool spends W ("a write spends the write limit"),
 * every other message R. This is the first of a tool call's two counts; the
 * request inside it spends its operation's own bucket in the runner.
 */
export function callBuckets(message: unknown, byName: ReadonlyMap<string, ToolDef>): Array<'R' | 'W'> {
  const messages = Array.isArray(message) ? message : [message];
  return messages.map((m) => {
    const { method, params } = (m ?? {}) as { method?: unknown; params?: { name?: unknown } };
    if (method !== 'tools/call' || typeof params?.name !== 'string') return 'R';
    return byName.get(params.name)?.callBucket ?? 'R';
  });
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
