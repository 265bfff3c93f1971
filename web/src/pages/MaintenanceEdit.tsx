import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { MaintenanceForm } from '../components/MaintenanceForm';

/** Plan a window (`/maintenance/new`) or change one (`/maintenance/:id/edit`, read on its own, so an ended window opens too). */
export default function MaintenanceEdit() {
  const { id } = useParams();
  const { can } = useMe();
  const one = useQuery({ ...q.maintenanceWindow(id ?? ''), enabled: !!id });
  const workspaces = useQuery(q.workspaces());
  const monitors = useQuery(q.monitors());
  if (!can('maintenance:manage')) return <p role="alert">Your role cannot {id ? 'change' : 'plan'} maintenance windows.</p>;
  // A window gone or outside the caller's workspaces is a 404, which ErrorView says in words.
  const failed = [...(id ? [one] : []), workspaces, monitors].find((r) => r.isError);
  if (failed) return <ErrorView error={failed.error} retry={() => void failed.refetch()} />;
  const pending = (id && one.isPending) || workspaces.isPending || monitors.isPending;
  if (pending) return <Loading label={id ? 'Loading the maintenance window' : 'Loading workspaces and monitors'} />;
  return <MaintenanceForm key={id ?? 'new'} existing={id ? one.data ?? null : null} workspaces={workspaces.data ?? []} monitors={monitors.data ?? []} />;
}
