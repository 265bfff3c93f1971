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
    remoteAddress: req.socket.remoteAddress,
    userAgent: req.headers['user-agent'],
  };
}
