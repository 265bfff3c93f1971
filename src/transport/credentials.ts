import type { IncomingMessage } from 'node:http';
import type { Credentials } from '../pipeline/run';

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The credentials and client of a Node request, for the runner. */
export function credentialsOf(req: IncomingMessage): Credentials {
  return {
    authorization: req.headers.authorization,
    cookie: req.headers.cookie,
    origin: one(req.headers.origin),
    referer: req.headers.referer,
    host: req.headers.host,
    method: req.method ?? 'GET',
    // Express's req.ip honours TRUST_PROXY; a bare Node request has only the socket's peer.
    remoteAddress: (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress,
    userAgent: req.headers['user-agent'],
  };
}
