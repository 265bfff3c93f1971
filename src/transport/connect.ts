import { fromBinary, fromJsonString, type DescMethod } from '@bufbuild/protobuf';
import {
  Code, ConnectError, createConnectRouter, createContextKey, createContextValues, type ConnectRouter, type HandlerContext,
} from '@connectrpc/connect';
import { createAsyncIterable, type UniversalHandler } from '@connectrpc/connect/protocol';
import { codeToHttpStatus, errorToJsonBytes, parseContentType } from '@connectrpc/connect/protocol-connect';
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import type { NextFunction, Request, Response } from 'express';
import { routes, type RouteDef } from '../../gen/routes';
import type { Caller } from '../auth/caller';
import { ApiError } from '../pipeline/errors';
import type { Runner } from '../pipeline/run';
import { serviceDesc } from './registry';
import { messageToShape, shapeToMessage } from './wire';
import { fillAbsentLists } from './absentLists';
import { BODY_LIMITS, drainUnread, readBody } from './body';
import { credentialsOf } from './credentials';
import { asApiError } from './respond';
import { bufferedFile, type FileAnswer } from './fileAnswer';
import type { Credentials } from '../pipeline/run';
import type { EventFeed, SseText } from '../stream/session';

/** API statuses as Connect codes. 503 is `unavailable`, the code Connect itself sends as 503 (a 502 becomes it too: Connect has no 502). */
const CODES: Record<number, Code> = {
  400: Code.InvalidArgument, 401: Code.Unauthenticated, 402: Code.FailedPrecondition, 403: Code.PermissionDenied,
  404: Code.NotFound, 409: Code.AlreadyExists, 413: Code.ResourceExhausted, 429: Code.ResourceExhausted,
  501: Code.Unimplemented, 502: Code.Unavailable, 503: Code.Unavailable,
};

/** The API error as a Connect error; the spec's body rides along in `vigil-error` metadata. */
function toConnectError(reason: unknown, log: (msg: string, e: unknown) => void): ConnectError {
  // The one rendering of unknown errors (src/transport/respond.ts): database failures keep their meaning here too.
  const err = asApiError(reason, log);
  if (err.status === 500) {
    return new ConnectError('Something went wrong on our side; it has been logged.', Code.Internal, new Headers({ 'vigil-error-code': 'internal' }));
  }
  const meta = new Headers({ 'vigil-error-code': err.code, 'vigil-error': JSON.stringify(err.toBody()) });
  for (const [k, v] of Object.entries(err.headers)) meta.set(k, v);
  // A request that lost a race it may simply repeat is Connect's Aborted (retry at a higher level), not AlreadyExists.
  return new ConnectError(err.message, err.code === 'conflict_retry' ? Code.Aborted : CODES[err.status] ?? Code.Unknown, meta);
}

function malformed(method: DescMethod, reason: string): ApiError {
  return new ApiError(400, 'invalid_protobuf', `The body is not a valid ${method.input.name} message.`, {}, [{ field: 'body', reason: reason.slice(0, 200) }]);
}

/** The caller admitted before the body was read, handed to the implementation. */
const CALLER = createContextKey<Caller | null>(null);
/** The request's credentials and client, for operations Connect runs without an admitted caller. */
const CREDENTIALS = createContextKey<Credentials | null>(null);

/** Writes a Connect unary error answer (the body was refused before Connect saw the request). */
function sendConnectError(req: Request, res: Response, err: ConnectError): void {
  drainUnread(req);
  const body = errorToJsonBytes(err, {});
  res.statusCode = codeToHttpStatus(err.code);
  err.metadata.forEach((v, k) => res.setHeader(k, v));
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', String(body.byteLength));
  res.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

/**
 * A server-streaming RPC (the event stream): admitted like any request (the
 * key, one read of the rate limit, the permission), then the handler's feed
 * is sent item by item as messages; keep-alives and the bare cursor of a
 * fresh stream have no message. The client going away ends the feed.
 */
function serverStream(runner: Runner, route: RouteDef, method: DescMethod, log: (msg: string, e: unknown) => void) {
  return async function* stream(req: unknown, ctx: HandlerContext) {
    let feed: EventFeed | null = null;
    const stop = () => feed?.close();
    ctx.signal.addEventListener('abort', stop);
    try {
      const input = messageToShape(method.input, req, 'request');
      const credentials = ctx.values.get(CREDENTIALS) ?? { authorization: ctx.requestHeader.get('authorization') ?? undefined, method: 'POST' };
      const headers: Record<string, string | undefined> = {};
      ctx.requestHeader.forEach((v, k) => { headers[k] = v; });
      const query: Record<string, unknown> = {};
      for (const q of route.queryParams) if (input[q.name] !== undefined) query[q.name] = input[q.name];
      const raw = { credentials, path: {}, query, body: undefined, headers };
      const answer = await runner.execute(route, raw, await runner.admit(route, credentials)) as FileAnswer;
      feed = (answer.content as Partial<SseText>).feed ?? null;
      if (!feed) throw new Error(`${route.operationId} answered no feed`);
      if (ctx.signal.aborted) feed.close();
      for await (const items of feed) {
        for (const item of items) if (item.kind === 'event') yield shapeToMessage(method.output, item.data);
      }
    } catch (err) {
      throw toConnectError(err, log);
    } finally {
      ctx.signal.removeEventListener('abort', stop);
      stop();
    }
  };
}

/**
 * Connect (binary and JSON, unary; the event stream as a server stream) at `/rpc/vigil.v1.<Service>/<Method>`: each
 * RPC is the operation of the same name, run through the same pipeline as
 * REST. Before Connect sees a request, the key, rate limit and permission are
 * checked from the headers, then the body is read through the one bounded
 * reader (decompressed within `BODY_LIMITS.api`) and must decode as the
 * method's input (else `invalid_argument`); Connect then gets it decompressed.
 */
export function connectMiddleware(runner: Runner, log: (msg: string, e: unknown) => void) {
  const byRpc = new Map(routes.map((r) => [`${r.service}/${r.rpc}`, r]));
  const services = [...new Set(routes.map((r) => r.service))];
  const router: ConnectRouter = createConnectRouter({
    connect: true, grpc: false, grpcWeb: false,
    readMaxBytes: BODY_LIMITS.api,
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  for (const name of services) {
    const desc = serviceDesc(name);
    const impl: Record<string, (req: unknown, ctx: HandlerContext) => Promise<unknown>> = {};
    for (const method of desc.methods as DescMethod[]) {
      const route = byRpc.get(`${name}/${method.name}`);
      if (route && method.methodKind === 'server_streaming') {
        impl[method.localName] = serverStream(runner, route, method, log) as never;
        continue;
      }
      if (!route || method.methodKind !== 'unary') continue;
      impl[method.localName] = async (req, ctx) => {
        try {
          let input: Record<string, unknown>;
          try {
            input = messageToShape(method.input, req, 'request');
          } catch (e) {
            throw malformed(method, e instanceof Error ? e.message : String(e));
          }
          // The request message is flat: path and query parameters by name, the rest is body.
          const path: Record<string, string> = {};
          const query: Record<string, unknown> = {};
          for (const p of route.pathParams) {
            // A path parameter is never empty over REST; over Connect it is a field the client may leave out.
            if (input[p] === undefined || input[p] === '') throw new ApiError(400, 'missing_field', `Missing field ${p}.`, { field: p }, [{ field: p, reason: 'is required' }]);
            path[p] = String(input[p]);
            delete input[p];
          }
          for (const q of route.queryParams) { if (input[q.name] !== undefined) query[q.name] = input[q.name]; delete input[q.name]; }
          const body = route.body === 'none' ? undefined : fillAbsentLists(route, input);
          const headers: Record<string, string | undefined> = {};
          ctx.requestHeader.forEach((v, k) => { headers[k] = v; });
          const credentials = ctx.values.get(CREDENTIALS) ?? { authorization: ctx.requestHeader.get('authorization') ?? undefined, method: 'POST' };
          const raw = { credentials, path, query, body, headers };
          const caller = ctx.values.get(CALLER);
          let result = caller ? await runner.execute(route, raw, caller) : await runner.run(route, raw);
          // A file (exports) travels in the message: read whole here.
          if (route.rawResponse) result = await bufferedFile(result as FileAnswer);
          return shapeToMessage(method.output, result as Record<string, unknown>);
        } catch (err) {
          throw toConnectError(err, log);
        }
      };
    }
    router.service(desc, impl as never);
  }
  const handlers = new Map<string, { handler: UniversalHandler; route: RouteDef }>();
  for (const handler of router.handlers) {
    const route = byRpc.get(`${handler.service.typeName.replace(/^vigil\.v1\./, '')}/${handler.method.name}`);
    if (route) handlers.set(`/rpc${handler.requestPath}`, { handler, route });
  }

  return async function connect(req: Request, res: Response, next: NextFunction): Promise<void> {
    const entry = handlers.get(req.url.split('?', 1)[0]);
    if (!entry) return next();
    const { handler, route } = entry;
    res.locals.operationId = route.operationId;
    const method = handler.method;
    let caller: Caller | null = null;
    let bytes: Buffer | null = null;
    const credentials = credentialsOf(req);
    // Only a Connect unary POST has a body to read; anything else Connect refuses on its own (405, 415).
    const type = req.method === 'POST' ? parseContentType(req.headers['content-type'] ?? null) : undefined;
    if (type && !type.stream) {
      try {
        caller = await runner.admit(route, credentials);
        res.locals.organizationId = caller.organizationId;
        bytes = await readBody(req, BODY_LIMITS.api);
        try {
          if (type.binary) fromBinary(method.input, bytes);
          else fromJsonString(method.input, bytes.toString('utf8'), { ignoreUnknownFields: true });
        } catch (e) {
          throw malformed(method, e instanceof Error ? e.message : String(e));
        }
      } catch (err) {
        return sendConnectError(req, res, toConnectError(err, log));
      }
    }
    try {
      const uReq = universalRequestFromNodeRequest(req, res, undefined, createContextValues().set(CALLER, caller).set(CREDENTIALS, credentials));
      if (bytes) {
        uReq.body = createAsyncIterable([new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)]);
        uReq.header.delete('content-encoding');
        uReq.header.set('content-length', String(bytes.byteLength));
      }
      await universalResponseToNodeResponse(await handler(uReq), res);
    } catch (reason) {
      if (ConnectError.from(reason).code !== Code.Aborted) log(`Connect ${route.operationId} failed`, reason);
      if (!res.headersSent) sendConnectError(req, res, toConnectError(reason, log));
      else res.destroy();
    }
  };
}
