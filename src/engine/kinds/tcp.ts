import net from 'node:net';
import { hostname, port, type CheckContext, type CheckKind, type CheckResult } from './kind';
import { checkLiteral, guardedLookup } from '../../net/policy';
import { CheckTimeoutError, classifyNetworkError } from '../http/errors';

/** How long a connection may take to open before the check is a timeout. */
export const TCP_TIMEOUT_MS = 10_000;

/** Opens one connection; resolves with the connect time in ms, rejects with the socket's error or a CheckTimeoutError. */
function connect(host: string, portNumber: number, ctx: CheckContext): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    // Node skips `lookup` for literal addresses, so those are checked here (throws into the promise: a rejection).
    if (net.isIP(host)) checkLiteral(ctx.net, host);
    const socket = net.connect({ host, port: portNumber, lookup: guardedLookup(ctx.net) });
    const finish = (err: unknown, ms?: number) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onStop);
      socket.removeAllListeners('connect');
      socket.on('error', () => {}); // errors after the verdict (a reset while closing) are of no interest
      socket.destroy();
      if (err) reject(err);
      else resolve(ms!);
    };
    const onStop = () => finish(new CheckTimeoutError('timed out'));
    const timer = setTimeout(() => finish(new CheckTimeoutError(`timed out after ${TCP_TIMEOUT_MS / 1000} s`)), TCP_TIMEOUT_MS);
    if (ctx.signal.aborted) return onStop();
    ctx.signal.addEventListener('abort', onStop, { once: true });
    socket.once('connect', () => finish(null, performance.now() - t0));
    socket.once('error', (e) => finish(e));
  });
}

/** A TCP connection to host:port opens within the timeout (10 s, or sooner when the check's signal aborts). */
export const tcp: CheckKind = {
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['host', 'port'],
    properties: { host: hostname, port },
  },
  sealedFields: [],
  hasPingUrl: false,

  async check(config: { host: string; port: number }, ctx: CheckContext): Promise<CheckResult> {
    const host = String(config.host).replace(/^\[|\]$/g, ''); // an IPv6 literal may come bracketed
    try {
      const ms = Math.round(await connect(host, config.port, ctx));
      return { outcome: 'up', cause: null, message: `connected to port ${config.port} in ${ms} ms`, responseTimeMs: ms };
    } catch (err) {
      const { cause, message } = classifyNetworkError(err, host);
      return { outcome: 'down', cause, message, responseTimeMs: null };
    }
  },
};
