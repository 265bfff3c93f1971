import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { q } from '../lib/queries';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { SetupChecklist } from '../components/SetupChecklist';
import { SummaryStats } from '../components/SummaryStats';
import { OpenIncidents } from '../components/OpenIncidents';
import { WorkspaceMonitors } from '../components/WorkspaceMonitors';
import { EmptyState } from '../components/EmptyState';
import { useMe } from '../lib/me';

/** The day's first page: what needs attention (open incidents) first, then every workspace's monitors. */
export function Overview() {
  const { can } = useMe();
  const monitors = useQuery(q.monitors());
  return (
    <>
      <h1>Overview</h1>
      <SetupChecklist />
      <SummaryStats />
      <OpenIncidents />
      {monitors.isPending ? <Loading label="Loading monitors" />
        : monitors.isError ? <ErrorView error={monitors.error} retry={() => void monitors.refetch()} />
          : monitors.data.length === 0 ? (
            <EmptyState title="No monitors yet">
              <p>A monitor checks a site, a port, a DNS name, a certificate or a cron job, and opens an incident when it fails.</p>
              {can('monitor:create') ? <Link className="button" to="/monitors/new">Create your first monitor</Link>
                : <p className="muted">Ask an owner or a member of your organisation to create one.</p>}
            </EmptyState>
          ) : <WorkspaceMonitors monitors={monitors.data} />}
    </>
  );
}
