import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { VigilApiError } from '../../lib/api';
import { q } from '../../lib/queries';
import { qs } from '../../lib/queries-settings';
import { useMe } from '../../lib/me';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { Field } from '../../components/Field';
import { AuditEntryRow, actorText } from '../../components/AuditEntryRow';

/** The filters, kept in the address so a filtered log is a link. */
const FILTERS = ['actor', 'action', 'resource', 'from', 'to'] as const;

/**
 * The audit log, newest first, a page of 50 at a time (the `nextBefore`
 * cursor). `GET /audit` takes no filter, so the filters narrow the entries
 * loaded so far — the page says so, and loading older entries widens them.
 */
export default function AuditLog() {
  const { me } = useMe();
  const log = useInfiniteQuery(qs.audit());
  const workspaces = useQuery(q.workspaces());
  const [params, setParams] = useSearchParams();
  const f = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ''])) as Record<(typeof FILTERS)[number], string>;
  const set = (k: string, v: string) => setParams((p) => { const n = new URLSearchParams(p); if (v) n.set(k, v); else n.delete(k); return n; }, { replace: true });
  const workspaceName = (id: string) => workspaces.data?.find((w) => w.id === id)?.name ?? id;

  const entries = useMemo(() => log.data?.pages.flatMap((p) => p.data) ?? [], [log.data]);
  const options = useMemo(() => ({
    actors: [...new Set(entries.map((e) => actorText(e.actor)))].sort(),
    actions: [...new Set(entries.map((e) => e.action))].sort(),
    resources: [...new Set(entries.map((e) => e.resourceType))].sort(),
  }), [entries]);
  // Dates are the person's own days: from the start of `from` to the end of `to`, in their time zone.
  const fromMs = f.from ? new Date(`${f.from}T00:00`).getTime() : null;
  const toMs = f.to ? new Date(`${f.to}T00:00`).getTime() + 86_400_000 : null;
  const shown = entries.filter((e) => {
    const at = new Date(e.at).getTime();
    return (!f.actor || actorText(e.actor) === f.actor) && (!f.action || e.action === f.action)
      && (!f.resource || e.resourceType === f.resource) && (fromMs === null || at >= fromMs) && (toMs === null || at < toMs);
  });
  const filtered = FILTERS.some((k) => f[k]);

  if (log.isPending) return <><h2>Audit log</h2><Loading label="Loading the audit log" /></>;
  if (log.isError && !log.data) {
    const e = log.error instanceof VigilApiError ? log.error : null;
    if (e?.status === 403 && !me.entitlements.auditLogIncluded) {
      return (
        <>
          <h2>Audit log</h2>
          <section className="card" role="status">
            <p>Your plan ({me.entitlements.plan}) does not include the audit log; it comes with the Business plan and above.</p>
            <p className="small muted">Vigil says: “{e.message}”</p>
          </section>
        </>
      );
    }
    return <><h2>Audit log</h2><ErrorView error={log.error} retry={() => void log.refetch()} /></>;
  }
  return (
    <>
      <h2>Audit log</h2>
      <p className="muted">Changes to the configuration: who made them, when, and what changed (never credentials or secrets).</p>
      <section className="card audit-log" aria-labelledby="audit-filters">
        <h3 id="audit-filters" className="visually-hidden">Filters</h3>
        <div className="filters">
          <Field label="Who">
            <select value={f.actor} onChange={(x) => set('actor', x.target.value)}>
              <option value="">Anyone</option>
              {options.actors.map((a) => <option key={a} value={a}>{a}</option>)}
            </select>
          </Field>
          <Field label="Action">
            <select value={f.action} onChange={(x) => set('action', x.target.value)}>
              <option value="">Any action</option>
              {options.actions.map((a) => <option key={a} value={a}>{a}</option>)}
            </select>
          </Field>
          <Field label="Record type">
            <select value={f.resource} onChange={(x) => set('resource', x.target.value)}>
              <option value="">Any record</option>
              {options.resources.map((a) => <option key={a} value={a}>{a}</option>)}
            </select>
          </Field>
          <Field label="From (day)"><input type="date" value={f.from} onChange={(x) => set('from', x.target.value)} /></Field>
          <Field label="To (day)"><input type="date" value={f.to} onChange={(x) => set('to', x.target.value)} /></Field>
          {filtered && <button type="button" className="secondary" onClick={() => setParams(new URLSearchParams(), { replace: true })}>Clear the filters</button>}
        </div>
        <p className="small muted" role="status">
          {filtered ? `${shown.length} of the ${entries.length} entries loaded match.` : `${entries.length} entries loaded, newest first.`}
          {log.hasNextPage ? ' Older entries are not loaded yet; filters apply to those loaded.' : ' That is the whole log.'}
        </p>
      </section>
      <section className="card audit-log" aria-label="Audit entries">
        {entries.length === 0 ? <p>Nothing recorded yet. Changes to monitors, channels, members, keys and settings appear here as they are made.</p>
          : shown.length === 0 ? <p>No loaded entry matches these filters.{log.hasNextPage ? ' Load older entries to look further back, or clear the filters.' : ' Clear the filters to see them all.'}</p>
            : <ul className="plain">{shown.map((e) => <AuditEntryRow key={e.id} entry={e} workspaceName={workspaceName} />)}</ul>}
        {log.hasNextPage && (
          <div className="row">
            <button type="button" className="secondary" disabled={log.isFetchingNextPage} onClick={() => void log.fetchNextPage()}>
              {log.isFetchingNextPage ? 'Loading older entries…' : 'Load older entries'}
            </button>
          </div>
        )}
        {log.isFetchNextPageError && <p role="alert" className="error small">{log.error instanceof VigilApiError ? log.error.message : String(log.error)}</p>}
      </section>
    </>
  );
}
