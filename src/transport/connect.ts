import type { DescMethod } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { expressConnectMiddleware } from '@connectrpc/connect-express';
import type { Handler } from 'express';
import { routes } from '../../gen/routes';
import { ApiError } from '../pipeline/errors';
import type { Runner } from '../pipeline/run';
import { serviceDesc } from './registry';
import { messageToShape, shapeToMessage } from './wire';
import { fillAbsentLists } from './absentLists';

const CODES: Record<number, Code> = {
  400: Code.InvalidArgument, 401: Code.Unauthenticated, 402: Code.FailedPrecondition, 403: Code.PermissionDenied,
  404: Code.NotFound, 409: Code.AlreadyExists, 413: Code.ResourceExhausted, 429: Code.ResourceExhausted,
  501: Code.Unimplemented, 502: Code.Unavailable,
};

/** The API error as a Connect error; the spec's body rides along in `vigil-error` metadata. */
function toConnectError(err: unknown, log: (msg: string, e: unknown) => void): ConnectError {
  if (!(err instanceof ApiError)) {
    log('unhandled error', err);
    return new ConnectError('Something went wrong on our side; it has been logged.', Code.Internal);
  }
  const meta = new Headers({ 'vigil-error-code': err.code, 'vigil-error': JSON.stringify(err.toBody()) });
  for (const [k, v] of Object.entries(err.headers)) meta.set(k, v);
  return new ConnectError(err.message, CODES[err.status] ?? Code.Unknown, meta);
}

/**
 * Connect (binary and JSON) at `/rpc/vigil.v1.<Service>/<Method>`: each RPC is
 * the operation of the same name, run through the same pipeline as REST.
 */
export function connectMiddleware(run: Runner, log: (msg: string, e: unknown) => void): Handler {
  const byRpc = new Map(routes.map((r) => [`${r.service}/${r.rpc}`, r]));
  const services = [...new Set(routes.map((r) => r.service))];
  return expressConnectMiddleware({
    requestPathPrefix: '/rpc',
    routes: (router: ConnectRouter) => {
      for (const name of services) {
        const desc = serviceDesc(name);
        const impl: Record<string, (req: unknown, ctx: HandlerContext) => Promise<unknown>> = {};
        for (const method of desc.methods as DescMethod[]) {
          const route = byRpc.get(`${name}/${method.name}`);
          if (!route || method.methodKind !== 'unary') continue;
          impl[method.localName] = async (req, ctx) => {
            try {
              const input = messageToShape(method.input, req, 'request');
              // The request message is flat: path and query parameters by name, the rest is body.
              const path: Record<string, string> = {};
              const query: Record<string, unknown> = {};
              for (const p of route.pathParams) { if (input[p] !== undefined) path[p] = String(input[p]); delete input[p]; }
              for (const q of route.queryParams) { if (input[q.name] !== undefined) query[q.name] = input[q.name]; delete input[q.name]; }
              const body = route.body === 'none' ? undefined : fillAbsentLists(route, input);
              const headers: Record<string, string | undefined> = {};
              ctx.requestHeader.forEach((v, k) => { headers[k] = v; });
              const result = await run(route, {
                authorization: ctx.requestHeader.get('authorization') ?? undefined,
                path, query, body, headers,
              });
              return shapeToMessage(method.output, result as Record<string, unknown>);
            } catch (err) {
              throw toConnectError(err, log);
            }
          };
        }
        router.service(desc, impl as never);
      }
    },
  });
}
