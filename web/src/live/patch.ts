/**
 * Applies one event of the live stream to the query cache: in place where the
 * event carries the data (a monitor's status), else by invalidating the few
 * queries it concerns, batched so a burst of events costs one read each.
 */
import type { QueryClient, QueryKey } from '@tanstack/react-query';
import type { Schema } from '../lib/api';
import { keys } from '../lib/queries';

type Monitor = Schema<'Monitor'>;
type Summary = Schema<'Summary'>;
type MonitorStatus = Monitor['status'];

/** The agreed shape of a stream message's data. */
export interface LiveEvent {
  type: string;
  at: string;
  workspaceId?: string;
  monitorId?: string;
  incidentId?: string;
  status?: string;
  since?: string;
}

const STATUSES: MonitorStatus[] = ['up', 'degraded', 'down', 'paused', 'pending'];

function moveSummary(qc: QueryClient, from: MonitorStatus | null, to: MonitorStatus | null): void {
  qc.setQueryData<Summary>(keys.summary, (s) => {
    if (!s) return s;
    const next = { ...s };
    if (from) next[from] = Math.max(0, next[from] - 1);
    if (to) next[to] += 1;
    if (!from && to) next.total += 1;
    if (from && !to) next.total = Math.max(0, next.total - 1);
    return next;
  });
}

/** Creates the applier for one cache; `flushMs` batches invalidations. */
export function cachePatcher(qc: QueryClient, flushMs = 750) {
  const pending = new Map<string, QueryKey>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const invalidate = (...ks: QueryKey[]) => {
    for (const k of ks) pending.set(JSON.stringify(k), k);
    timer ??= setTimeout(() => {
      timer = null;
      const batch = [...pending.values()];
      pending.clear();
      // Only queries on screen are read again; the others are marked stale for their next use.
      for (const k of batch) void qc.invalidateQueries({ queryKey: k });
    }, flushMs);
  };

  function monitorStatus(e: LiveEvent): void {
    const status = e.status as MonitorStatus;
    if (!e.monitorId || !STATUSES.includes(status)) return;
    let before: MonitorStatus | null = null;
    qc.setQueryData<Monitor[]>(keys.monitors, (list) => list?.map((m) => {
      if (m.id !== e.monitorId) return m;
      before = m.status;
      return { ...m, status, statusSince: e.since ?? e.at };
    }));
    qc.setQueryData<Monitor>(keys.monitor(e.monitorId), (m) => (m ? { ...m, status, statusSince: e.since ?? e.at } : m));
    if (before !== null && before !== status) moveSummary(qc, before, status);
    else if (before === null) invalidate(keys.summary);
  }

  return function apply(e: LiveEvent): void {
    switch (e.type) {
      case 'monitor.status':
        monitorStatus(e);
        return;
      case 'monitor.changed':
        invalidate(keys.monitors, keys.summary, ...(e.monitorId ? [keys.monitor(e.monitorId)] : []));
        return;
      case 'monitor.deleted': {
        let gone: MonitorStatus | null = null;
        qc.setQueryData<Monitor[]>(keys.monitors, (list) => list?.filter((m) => (m.id === e.monitorId ? ((gone = m.status), false) : true)));
        if (gone) moveSummary(qc, gone, null);
        if (e.monitorId) qc.removeQueries({ queryKey: keys.monitor(e.monitorId) });
        return;
      }
      case 'incident.opened':
      case 'incident.acknowledged':
      case 'incident.resolved':
      case 'incident.commented':
        if (e.incidentId) invalidate(keys.incident(e.incidentId));
        invalidate(keys.incidents);
        if (e.type !== 'incident.commented') invalidate(keys.summary);
        if (e.monitorId && e.type !== 'incident.commented') invalidate(keys.monitor(e.monitorId));
        return;
      case 'setup.changed':
        invalidate(keys.setup);
        return;
      case 'reset':
        // The server could not resume from our last event: everything on screen is read again.
        void qc.invalidateQueries();
        return;
      default:
        // An event type this version does not know: nothing to patch.
    }
  };
}
