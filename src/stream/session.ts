/**
 * One open stream: replays what a resuming client missed, then relays the
 * hub's rows its caller may see, with a keep-alive comment between them. The
 * caller is resolved again at every keep-alive, so a revoked key, a removed
 * member, a changed role or confinement takes effect within one interval (a
 * caller gone, or now in another organisation, ends the stream).
 */
import type { Caller } from '../auth/caller';
import { compare, cursorOf, messageOf, parseCursor, sseMessage, visibleTo, type Position, type StreamRow } from './events';
import type { StreamHub } from './hub';

/** Rows waiting for a slow client beyond this are dropped for a `reset`: memory stays bounded. */
const QUEUE_MAX = 5_000;
/** What EventSource waits before reconnecting (ms). */
const RETRY_MS = 3_000;

export interface StreamOptions {
  hub: StreamHub;
  caller: Caller;
  /** `Last-Event-ID` (or the `lastEventId` query): where a reconnecting client stands. */
  lastEventId: string | undefined;
  heartbeatMs: number;
  /** Resolves the request's credential again (throws when it no longer authenticates). */
  reauthenticate(): Promise<Caller>;
}

const resetMessage = (p: Position) => sseMessage(cursorOf(p), 'reset', { type: 'reset', at: new Date().toISOString(), workspaceId: null });

/** The SSE text as chunks; `close` ends it at once (the client went away, or shutdown). */
export interface EventChunks extends AsyncIterable<string> { close(): void }

/**
 * Opens the stream: registers it with the hub (refusals are thrown here,
 * before any byte is sent) and answers the SSE text as chunks.
 */
export async function openStream(o: StreamOptions): Promise<EventChunks> {
  let caller = o.caller;
  const queue: StreamRow[] = [];
  let overflow = false;
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => { const w = wake; wake = null; w?.(); };
  const remove = o.hub.add({
    organizationId: caller.organizationId,
    push(rows) {
      for (const r of rows) if (r.organizationId === caller.organizationId) queue.push(r);
      if (queue.length > QUEUE_MAX) { queue.length = 0; overflow = true; }
      notify();
    },
    end() { ended = true; notify(); },
  });

  let head: string;
  let last: Position;
  let replay: StreamRow[] = [];
  try {
    const live = o.hub.position();
    const asked = o.lastEventId === undefined || o.lastEventId === '' ? undefined : parseCursor(o.lastEventId);
    const rows = asked ? await o.hub.replay(asked, live) : null;
    if (asked === undefined) {
      // A bare id: EventSource keeps it as the cursor of its next reconnect without dispatching anything.
      head = `retry: ${RETRY_MS}\nid: ${cursorOf(live)}\n\n`;
      last = live;
    } else if (asked === null || rows === null) {
      head = `retry: ${RETRY_MS}\n${resetMessage(live)}`;
      last = live;
    } else {
      head = `retry: ${RETRY_MS}\n\n`;
      // Everything after the client's cursor; from a process further along than this one, nothing up to it again.
      replay = rows;
      last = asked;
    }
  } catch (e) {
    remove();
    throw e;
  }

  const render = (rows: readonly StreamRow[]) => {
    let out = '';
    for (const r of rows) {
      if (compare(r, last) <= 0) continue;
      last = r;
      if (visibleTo(caller, r)) out += messageOf(r);
    }
    return out;
  };

  async function* chunks(): AsyncGenerator<string> {
    try {
      yield head + render(replay);
      replay = [];
      let beatAt = Date.now() + o.heartbeatMs;
      while (!ended) {
        if (overflow) {
          overflow = false;
          last = o.hub.position();
          yield resetMessage(last);
          continue;
        }
        if (queue.length) {
          const text = render(queue.splice(0));
          if (text) yield text;
          continue;
        }
        const wait = beatAt - Date.now();
        if (wait > 0) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, wait);
            wake = () => { clearTimeout(t); resolve(); };
          });
          wake = null;
          continue;
        }
        beatAt = Date.now() + o.heartbeatMs;
        try {
          const fresh = await o.reauthenticate();
          if (fresh.organizationId !== caller.organizationId) return;
          caller = fresh;
        } catch {
          return; // no longer signed in: the reconnect gets the 401
        }
        yield ': keep-alive\n\n';
      }
    } finally {
      remove();
    }
  }
  const gen = chunks();
  return { [Symbol.asyncIterator]: () => gen, close() { ended = true; notify(); remove(); } };
}
