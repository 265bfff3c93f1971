/**
 * A small server-sent-events reader for tests: parses the stream as the
 * HTML standard says (id, event, data, comments), keeps every message, and
 * remembers the last id as EventSource would.
 */
export interface SseMessage { id: string | null; event: string; data: any }

export interface SseStream {
  status: number;
  headers: Headers;
  messages: SseMessage[];
  comments: string[];
  /** The last `id:` seen (what EventSource would send as Last-Event-ID). */
  lastId: string | null;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  /** Waits for a message matching `pred` (rejects after `ms`). */
  waitFor(pred: (m: SseMessage) => boolean, ms?: number): Promise<SseMessage>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const s: SseStream = {
    status: res.status, headers: res.headers, messages: [], comments: [], lastId: null, ended: Promise.resolve(),
    waitFor: async () => { throw new Error('not a stream'); },
    close: () => abort.abort(),
  };
  if (res.status !== 200 || !res.body) { await res.text().catch(() => undefined); return s; }
  const waiters: { pred: (m: SseMessage) => boolean; resolve: (m: SseMessage) => void }[] = [];
  const deliver = (m: SseMessage) => {
    s.messages.push(m);
    for (const w of [...waiters]) if (w.pred(m)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(m); }
  };
  s.waitFor = (pred, ms = 15_000) => {
    const found = s.messages.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no matching event within ${ms} ms; got ${JSON.stringify(s.messages.map((m) => m.event))}`)), ms);
      waiters.push({ pred, resolve: (m) => { clearTimeout(t); resolve(m); } });
    });
  };
  s.ended = (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    let id: string | null = null;
    let event = '';
    let data: string[] = [];
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line === '') {
            if (id !== null) s.lastId = id;
            if (data.length) deliver({ id, event: event || 'message', data: JSON.parse(data.join('\n')) });
            id = null; event = ''; data = [];
          } else if (line.startsWith(':')) s.comments.push(line.slice(1).trim());
          else {
            const [field, ...rest] = line.split(':');
            const value = rest.join(':').replace(/^ /, '');
            if (field === 'id') id = value;
            else if (field === 'event') event = value;
            else if (field === 'data') data.push(value);
          }
        }
      }
    } catch { /* aborted */ }
  })();
  return s;
}
