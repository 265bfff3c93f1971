/**
 * One open stream: replays what a resuming client missed, then relays the
 * hub's rows its caller may see, with a keep-alive between them. The caller
 * is resolved again at every keep-alive, so a revoked key, a removed member,
 * a changed role or confinement takes effect within one interval (a caller
 * gone, or now in another organisation, ends the stream).
 *
 * It yields batches of items; REST renders them as server-sent events
 * (`sseText`), Connect as messages (src/transport/connect.ts).
 */
import type { Caller } from '../auth/caller';
import { compare, cursorOf, parseCursor, visibleTo, type EventType, type Position, type StreamRow } from './events';
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

/** What a stream sends: an event, the bare cursor of a fresh connection, or a keep-alive. */
export type StreamItem =
  | { kind: 'event'; id: string; type: EventType; data: Record<string, unknown> }
  | { kind: 'cursor'; id: string }
  | { kind: 'keepalive' };

/** The stream's batches; `close` ends it at once (the client went away, or shutdown). */
export interface EventFeed extends AsyncIterable<StreamItem[]> { close(): void }

const eventOf = (row: StreamRow): StreamItem => ({
  kind: 'event', id: cursorOf(row), type: row.type, data: { type: row.type, id: cursorOf(row), at: row.at, workspaceId: row.workspaceId, ...row.data },
});
const resetOf = (p: Position): StreamItem => ({ kind: 'event', id: cursorOf(p), type: 'reset', data: { type: 'reset', id: cursorOf(p), at: new Date().toISOString(), workspaceId: null } });

/**
 * Opens the stream: registers it with the hub (refusals are thrown here,
 * before anything is sent) and answers its batches.
 */
export async function openStream(o: StreamOptions): Promise<EventFeed> {
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

  let first: StreamItem[];
  let last: Position;
  let replay: StreamRow[] = [];
  try {
    const live = o.hub.position();
    const asked = o.lastEventId === undefined || o.lastEventId === '' ? undefined : parseCursor(o.lastEventId);
    const rows = asked ? await o.hub.replay(asked, live) : null;
    if (asked === undefined) {
      first = [{ kind: 'cursor', id: cursorOf(live) }];
      last = live;
    } else if (asked === null || rows === null) {
      first = [resetOf(live)];
      last = live;
    } else {
      // Everything after the client's cursor; from a process further along than this one, nothing up to it again.
      first = [];
      replay = rows;
      last = asked;
    }
  } catch (e) {
    remove();
    throw e;
  }

  const visible = (rows: readonly StreamRow[]) => {
    const out: StreamItem[] = [];
    for (const r of rows) {
      if (compare(r, last) <= 0) continue;
      last = r;
      if (visibleTo(caller, r)) out.push(eventOf(r));
    }
    return out;
  };

  async function* batches(): AsyncGenerator<StreamItem[]> {
    try {
      yield [...first, ...visible(replay)];
      replay = [];
      let beatAt = Date.now() + o.heartbeatMs;
      while (!ended) {
        if (overflow) {
          overflow = false;
          last = o.hub.position();
          yield [resetOf(last)];
          continue;
        }
        if (queue.length) {
          const items = visible(queue.splice(0));
          if (items.length) yield items;
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
        yield [{ kind: 'keepalive' }];
      }
    } finally {
      remove();
    }
  }
  const gen = batches();
  return { [Symbol.asyncIterator]: () => gen, close() { ended = true; notify(); remove(); } };
}

/** The SSE text of one batch (the first batch also sets EventSource's reconnection delay). */
function sseOf(items: readonly StreamItem[], first: boolean): string {
  let out = first ? `retry: ${RETRY_MS}\n` : '';
  for (const i of items) {
    // Data is one line of JSON (JSON.stringify never writes a newline).
    if (i.kind === 'event') out += `id: ${i.id}\nevent: ${i.type}\ndata: ${JSON.stringify(i.data)}\n\n`;
    // A bare id: EventSource keeps it as the cursor of its next reconnect without dispatching anything.
    else if (i.kind === 'cursor') out += `id: ${i.id}\n\n`;
    else out += ': keep-alive\n\n';
  }
  return first && !items.length ? `${out}\n` : out;
}

/** Server-sent-events text of a feed, closable like it; `feed` stays reachable for transports that send items. */
export interface SseText extends AsyncIterable<string> { close(): void; feed: EventFeed }

export function sseText(feed: EventFeed): SseText {
  async function* text(): AsyncGenerator<string> {
    let first = true;
    for await (const items of feed) {
      yield sseOf(items, first);
      first = false;
    }
  }
  const gen = text();
  return { [Symbol.asyncIterator]: () => gen, close: () => feed.close(), feed };
}
