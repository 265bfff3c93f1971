/**
 * The live stream (`GET /api/v1/stream`, server-sent events): one
 * connection per tab, resumed by the browser with Last-Event-ID after a
 * short disconnect. Its state is observable for the header: `live`,
 * `connecting`, or `unavailable` when the server refused it (a 429 while the
 * organisation is over its read limit, a restart behind a proxy, or a server
 * without the stream: 404). Refused, it is tried again after 15 s, doubling
 * up to 5 minutes, and at once when a rate limit ends; meanwhile the app
 * keeps what it has and offers a refresh — it never polls the data.
 */
import type { QueryClient } from '@tanstack/react-query';
import { vigil } from '../lib/api';
import { cachePatcher, type LiveEvent } from './patch';

export type StreamState = 'connecting' | 'live' | 'unavailable';

const TYPES = [
  'monitor.status', 'monitor.changed', 'monitor.deleted',
  'incident.opened', 'incident.acknowledged', 'incident.resolved', 'incident.commented',
  'setup.changed', 'reset',
];
const FIRST_RETRY_MS = 15_000;
const LAST_RETRY_MS = 300_000;

let state: StreamState = 'connecting';
const listeners = new Set<() => void>();
const setState = (s: StreamState) => { if (s !== state) { state = s; for (const l of listeners) l(); } };

export const streamState = {
  get: () => state,
  subscribe: (l: () => void) => { listeners.add(l); return () => { listeners.delete(l); }; },
};

let source: EventSource | null = null;
let retryTimer: ReturnType<typeof setTimeout> | null = null;
let retryMs = FIRST_RETRY_MS;
let unwatchLimit: (() => void) | null = null;

function stop(): void {
  source?.close();
  source = null;
  if (retryTimer) clearTimeout(retryTimer);
  retryTimer = null;
  unwatchLimit?.();
  unwatchLimit = null;
}

/** Opens the stream (again); returns a function that closes it for good. */
export function openStream(qc: QueryClient): () => void {
  stop();
  const apply = cachePatcher(qc);
  const es = new EventSource('/api/v1/stream', { withCredentials: true });
  source = es;
  setState('connecting');
  es.onopen = () => { retryMs = FIRST_RETRY_MS; setState('live'); };
  es.onerror = () => {
    // CONNECTING: the connection dropped and the browser retries by itself, resuming with Last-Event-ID.
    if (es.readyState !== EventSource.CLOSED) { setState('connecting'); return; }
    // CLOSED: the server refused (an HTTP error); the browser gives up, so we try again later.
    setState('unavailable');
    retryTimer = setTimeout(() => openStream(qc), retryMs);
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };
  const onMessage = (m: MessageEvent<string>) => {
    try {
      const data = JSON.parse(m.data) as LiveEvent;
      apply({ ...data, type: data.type ?? m.type });
    } catch { /* a malformed message is skipped */ }
  };
  for (const t of TYPES) es.addEventListener(t, onMessage as EventListener);
  // The end of a rate limit is the likeliest end of a refusal: try at once.
  unwatchLimit = vigil.rateLimit.subscribe(() => {
    if (vigil.rateLimit.until === null && state === 'unavailable' && source === es) openStream(qc);
  });
  return () => { if (source === es) { stop(); setState('connecting'); } };
}
