import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { ApiError } from '../pipeline/errors';
import { authenticate } from '../auth/authenticate';
import { sessionFromCookie } from '../auth/sessions';
import { openStream, sseText } from '../stream/session';
import { EVENT_STREAM } from '../transport/eventStream';

/** The event stream (src/stream/, docs/stream.md): an endless text/event-stream answer. */
export const streamHandlers = {
  streamEvents: async (i, ctx) => {
    const hub = ctx.services.stream;
    if (!hub) throw new ApiError(503, 'stream_unavailable', 'This process serves no event stream.');
    // The same credential the request was admitted with, resolved again at every keep-alive.
    const token = i.headers?.authorization ? null : sessionFromCookie(i.headers?.cookie);
    const authorization = i.headers?.authorization ?? (token ? `Bearer ${token}` : undefined);
    const feed = await openStream({
      hub, caller: ctx.caller, heartbeatMs: ctx.services.config.stream.heartbeatSeconds * 1000,
      lastEventId: i.headers?.['last-event-id'] ?? i.query.lastEventId,
      reauthenticate: () => authenticate(ctx.db, authorization),
    });
    return { content: sseText(feed), contentType: EVENT_STREAM, filename: 'stream' };
  },
} satisfies Partial<Handlers<Ctx>>;
