/**
 * The live stream (`GET /api/v1/stream`, server-sent events): one
 * connection per tab, resumed by the browser with Last-Event-ID after a
 * short disconnect. Its state is observable for the header: `live`,
 * `connecting`, or `unavailable` when the server refused it (for example a
 * server without the stream answers 404) — then the app keeps working on
 * what it has and offers a refresh instead of polling.
 */
import type { QueryClient } from '@tanstack/react-query';
import { cachePatcher, type LiveEvent } from './patch';

export type StreamState = 'connecting' | 'live' | 'unavailable';

const TYPES = [
  'monitor.status', 'monitor.changed', 'monitor.deleted',
  'incident.opened', 'incident.acknowledged', 'incident.resolved', 'incident.commented',
  'setup.changed', 'reset',
];

let state: StreamState = 'connecting';
const listeners = new Set<() => void>();
const setState = (s: StreamState) => { if (s !== state) { state = s; for (const l of listeners) l(); } };

export const streamState = {
  get: () => state,
  subscribe: (l: () => void) => { listeners.add(l); return () => { listeners.delete(l); }; },
};

let source: EventSource | null = null;

/** Opens the stream (again); returns a function that closes it. */
export function openStream(qc: QueryClient): () => void {
  source?.close();
  const apply = cachePatcher(qc);
  const es = new EventSource('/api/v1/stream', { withCredentials: true });
  source = es;
  setState('connecting');
  es.onopen = () => setState('live');
  es.onerror = () => {
    // CLOSED: the server refused (an HTTP error or not an event stream); the browser will not retry.
    // CONNECTING: the connection dropped and the browser retries by itself, resuming with Last-Event-ID.
    setState(es.readyState === EventSource.CLOSED ? 'unavailable' : 'connecting');
  };
  const onMessage = (m: MessageEvent<string>) => {
    try {
      const data = JSON.parse(m.data) as LiveEvent;
      apply({ ...data, type: data.type ?? m.type });
    } catch { /* a malformed message is skipped */ }
  };
  for (const t of TYPES) es.addEventListener(t, onMessage as EventListener);
  return () => { es.close(); if (source === es) source = null; };
}
