import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { MonitorForm } from '../components/MonitorForm';

/** Create a monitor (`/monitors/new`) or edit one (`/monitors/:id/edit`). */
export default function MonitorEdit() {
  const { id } = useParams();
  const { can } = useMe();
  const monitor = useQuery({ ...q.monitor(id ?? ''), enabled: !!id });
  const workspaces = useQuery({ ...q.workspaces(), enabled: !id });
  if (!can(id ? 'monitor:update' : 'monitor:create')) return <p role="alert">Your role cannot {id ? 'change' : 'create'} monitors.</p>;
  if (id) {
    if (monitor.isPending) return <Loading label="Loading the monitor" />;
    if (monitor.isError) return <ErrorView error={monitor.error} retry={() => void monitor.refetch()} />;
    return <MonitorForm existing={monitor.data} workspaces={[]} />;
  }
  if (workspaces.isPending) return <Loading label="Loading workspaces" />;
  if (workspaces.isError) return <ErrorView error={workspaces.error} retry={() => void workspaces.refetch()} />;
  return <MonitorForm existing={null} workspaces={workspaces.data} />;
}
