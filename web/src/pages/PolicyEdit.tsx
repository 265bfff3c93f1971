import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { PolicyForm } from '../components/PolicyForm';

/** Create an escalation policy (`/on-call/policies/new`) or edit one (`/on-call/policies/:id/edit`). */
export default function PolicyEdit() {
  const { id } = useParams();
  const { can, confined } = useMe();
  const reads = [useQuery(q.onCall()), useQuery(q.members()), useQuery(q.channels()), useQuery(q.monitors())] as const;
  const [onCall, members, channels, monitors] = reads;
  const body = () => {
    if (!can('notification_channel:manage')) return <p role="alert">Your role cannot change escalation policies.</p>;
    const failed = reads.find((r) => r.isError);
    if (failed) return <ErrorView error={failed.error} retry={() => void failed.refetch()} />;
    if (!onCall.data || !members.data || !channels.data || !monitors.data) return <Loading label="Loading the policy" />;
    const existing = id ? onCall.data.escalationPolicies.find((p) => p.id === id) : null;
    if (id && !existing) return <p role="alert">This escalation policy was not found. It may have been deleted. <Link to="/on-call">Back to on-call</Link></p>;
    return (
      <PolicyForm existing={existing ?? null} monitors={monitors.data} confined={confined}
        targets={{ schedules: onCall.data.schedules, people: members.data, channels: channels.data }} />
    );
  };
  return <><h1>{id ? 'Edit escalation policy' : 'New escalation policy'}</h1>{body()}</>;
}
