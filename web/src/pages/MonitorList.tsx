import { useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { EmptyState } from '../components/EmptyState';
import { MonitorFilters, filterMonitors, type Filters } from '../components/MonitorFilters';
import { MonitorTable } from '../components/MonitorTable';
import { BulkPause } from '../components/BulkPause';

/** Every visible monitor: filters and search kept in the address, a virtualised table, bulk pause and resume. */
export default function MonitorList() {
  const { can } = useMe();
  const monitors = useQuery(q.monitors());
  const [params, setParams] = useSearchParams();
  const filters: Filters = {
    search: params.get('q') ?? '', status: params.get('status') ?? '', kind: params.get('kind') ?? '',
    tag: params.get('tag') ?? '', workspace: params.get('workspace') ?? '',
  };
  const setFilter = (name: keyof Filters, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name === 'search' ? 'q' : name, value); else next.delete(name === 'search' ? 'q' : name);
    setParams(next, { replace: true });
  };
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const shown = useMemo(() => filterMonitors(monitors.data ?? [], filters), [monitors.data, filters.search, filters.status, filters.kind, filters.tag, filters.workspace]);
  return (
    <>
      <div className="spread">
        <h1>Monitors</h1>
        {can('monitor:create') && <Link className="button" to="/monitors/new">New monitor</Link>}
      </div>
      {monitors.isPending ? <Loading label="Loading monitors" />
        : monitors.isError ? <ErrorView error={monitors.error} retry={() => void monitors.refetch()} />
          : monitors.data.length === 0 ? (
            <EmptyState title="No monitors yet">
              {can('monitor:create') ? <p><Link to="/monitors/new">Create a monitor</Link> to start checking a site or service.</p>
                : <p className="muted">Nothing is monitored in your workspaces yet. Ask a member of your organisation to create a monitor.</p>}
            </EmptyState>
          ) : (
            <>
              <MonitorFilters monitors={monitors.data} filters={filters} onChange={setFilter} />
              {can('monitor:pause') && <BulkPause selected={selected} onDone={() => setSelected(new Set())} />}
              <p className="muted small" role="status">{shown.length} of {monitors.data.length} monitors</p>
              {shown.length === 0 ? <p>No monitor matches these filters. Clear a filter or the search to see more.</p>
                : <MonitorTable monitors={shown} selectable={can('monitor:pause')} selected={selected} onSelect={setSelected} />}
            </>
          )}
    </>
  );
}
