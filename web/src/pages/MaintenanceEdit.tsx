import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { MaintenanceForm } from '../components/MaintenanceForm';

/** Plan a window (`/maintenance/new`) or change one (`/maintenance/:id/edit`). */
export default function MaintenanceEdit() {
  const { id } = useParams();
  const { can } = useMe();
  // The contract reads windows only as a list: the one to edit is taken from it (current and upcoming windows).
  const list = useQuery({ ...q.maintenance(), enabled: !!id });
  const workspaces = useQuery(q.workspaces());
  const monitors = useQuery(q.monitors());
  if (!can('maintenance:manage')) return <p role="alert">Your role cannot {id ? 'change' : 'plan'} maintenance windows.</p>;
  const pending = (id && list.isPending) || workspaces.isPending || monitors.isPending;
  if (pending) return <Loading label={id ? 'Loading the maintenance window' : 'Loading workspaces and monitors'} />;
  const failed = [list, workspaces, monitors].find((r) => r.isError);
  if (failed) return <ErrorView error={failed.error} retry={() => void failed.refetch()} />;
  const existing = id ? list.data?.find((w) => w.id === id) ?? null : null;
  if (id && !existing) {
    return <div role="alert" className="card"><p>This window was not found: it may have ended, been deleted, or be outside your workspaces.</p></div>;
  }
  return <MaintenanceForm key={id ?? 'new'} existing={existing} workspaces={workspaces.data ?? []} monitors={monitors.data ?? []} />;
}
