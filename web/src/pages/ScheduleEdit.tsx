import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { ScheduleForm } from '../components/ScheduleForm';

/** Create an on-call schedule (`/on-call/schedules/new`) or edit one (`/on-call/schedules/:id/edit`). */
export default function ScheduleEdit() {
  const { id } = useParams();
  const { can, confined } = useMe();
  const onCall = useQuery(q.onCall());
  const members = useQuery(q.members());
  const workspaces = useQuery(q.workspaces());
  const title = id ? 'Edit schedule' : 'New schedule';
  const body = () => {
    if (!can('notification_channel:manage')) return <p role="alert">Your role cannot change on-call schedules.</p>;
    const failed = [onCall, members, workspaces].find((r) => r.isError);
    if (failed) return <ErrorView error={failed.error} retry={() => void failed.refetch()} />;
    if (!onCall.data || !members.data || !workspaces.data) return <Loading label="Loading the schedule" />;
    const existing = id ? onCall.data.schedules.find((s) => s.id === id) : null;
    if (id && !existing) return <p role="alert">This schedule was not found. It may have been deleted. <Link to="/on-call">Back to on-call</Link></p>;
    return <ScheduleForm existing={existing ?? null} members={members.data} workspaces={workspaces.data} confined={confined} />;
  };
  return <><h1>{title}</h1>{body()}</>;
}
