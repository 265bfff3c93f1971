import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { VigilApiError } from '../../lib/api';
import { q } from '../../lib/queries';
import { qs } from '../../lib/queries-settings';
import { useMe } from '../../lib/me';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { AuditEntryRow } from '../../components/AuditEntryRow';
import { AUDIT_FILTERS, AuditFilterForm, fieldOf, serverFilters, type AuditAddress } from '../../components/AuditFilters';

/**
 * The audit log, newest first, a page of 50 at a time (the `nextBefore`
 * cursor). The filters are the server's (`GET /audit` narrows before it cuts
 * a page), kept in the address so a filtered log is a link; older matching
 * entries load on demand, with the same filters.
 */
export default function AuditLog() {
  const { me } = useMe();
  const [params, setParams] = useSearchParams();
  const applied = Object.fromEntries(AUDIT_FILTERS.map((k) => [k, params.get(k) ?? ''])) as AuditAddress;
  // Recomputed only when the address changes: the instants are the query's key.
  const filters = useMemo(() => serverFilters(applied), [params]);
  const log = useInfiniteQuery(qs.audit(filters));
  const workspaces = useQuery(q.workspaces());
  const apply = (f: AuditAddress) => setParams(() => {
    const n = new URLSearchParams();
    for (const k of AUDIT_FILTERS) if (f[k]) n.set(k, f[k]);
    return n;
  });
  const workspaceName = (id: string) => workspaces.data?.find((w) => w.id === id)?.name ?? id;
  const entries = useMemo(() => log.data?.pages.flatMap((p) => p.data) ?? [], [log.data]);
  const filtered = AUDIT_FILTERS.some((k) => applied[k]);
  const e = log.error instanceof VigilApiError ? log.error : null;
  // A filter the server refused: its words at the control that set it.
  const refused = e?.status === 400 && fieldOf(e.details?.field) ? { field: fieldOf(e.details?.field)!, reason: e.message } : null;

  if (log.isError && !log.data && e?.status === 403 && !me.entitlements.auditLogIncluded) {
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
  return (
    <>
      <h2>Audit log</h2>
      <p className="muted">Changes to the configuration: who made them, when, and what changed (never credentials or secrets).</p>
      <section className="card audit-log" aria-labelledby="audit-filters">
        <h3 id="audit-filters" className="visually-hidden">Filters</h3>
        <AuditFilterForm applied={applied} entries={entries} onApply={apply} error={refused} />
        {log.data && (
          <p className="small muted" role="status">
            {filtered ? `${entries.length} matching entries shown, newest first.` : `${entries.length} entries shown, newest first.`}
            {log.hasNextPage ? ` Older ${filtered ? 'matching ' : ''}entries: load them below.` : filtered ? ' That is every matching entry.' : ' That is the whole log.'}
          </p>
        )}
      </section>
      <section className="card audit-log" aria-label="Audit entries">
        {log.isPending ? <Loading label="Loading the audit log" />
          : log.isError && !log.data ? (refused ? <p>Vigil refused these filters: see the field marked above.</p> : <ErrorView error={log.error} retry={() => void log.refetch()} />)
            : entries.length === 0 ? (filtered
              ? <p>No entry matches these filters. Widen the days or clear the filters to see the whole log.</p>
              : <p>Nothing recorded yet. Changes to monitors, channels, members, keys and settings appear here as they are made.</p>)
              : <ul className="plain">{entries.map((x) => <AuditEntryRow key={x.id} entry={x} workspaceName={workspaceName} />)}</ul>}
        {log.hasNextPage && (
          <div className="row">
            <button type="button" className="secondary" disabled={log.isFetchingNextPage} onClick={() => void log.fetchNextPage()}>
              {log.isFetchingNextPage ? 'Loading older entries…' : 'Load older entries'}
            </button>
          </div>
        )}
        {log.isFetchNextPageError && <p role="alert" className="error small">{e ? e.message : String(log.error)}</p>}
      </section>
    </>
  );
}
