import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { who } from '../lib/oncall';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { ScheduleCard } from '../components/ScheduleCard';
import { PolicyList } from '../components/PolicyList';

/**
 * Who is on call now and next for each schedule, the covers ahead, the
 * escalation policies; for those who may manage on-call, the controls that
 * create, edit and delete them (a viewer gets none).
 */
export default function OnCall() {
  const { can, confined } = useMe();
  const manage = can('notification_channel:manage');
  const data = useQuery(q.onCall());
  const needMonitors = !!data.data?.escalationPolicies.some((p) => p.monitorIds.length);
  const members = useQuery({ ...q.members(), enabled: manage });
  const monitors = useQuery({ ...q.monitors(), enabled: needMonitors });
  if (data.isPending) return <><h1>On-call</h1><Loading label="Loading on-call" /></>;
  if (data.isError) return <><h1>On-call</h1><ErrorView error={data.error} retry={() => void data.refetch()} /></>;
  const d = data.data;
  const monitorNames = new Map((monitors.data ?? []).map((m) => [m.id, m.name]));
  return (
    <>
      <div className="spread page-head">
        <h1>On-call</h1>
        {manage && <Link className="button" to="/on-call/schedules/new">New schedule</Link>}
      </div>
      {d.unreachable.length > 0 && (
        <div className="banner warn" role="alert">
          <span>No confirmed channel reaches {d.unreachable.map(who).join(', ')}: alerts to them would go nowhere.</span>
        </div>
      )}
      {d.schedules.length === 0 ? (
        <section className="card">
          <p>No on-call schedule yet. {manage
            ? <>A schedule rotates who gets paged: <Link to="/on-call/schedules/new">create the first one</Link>, then an escalation policy that pages it.</>
            : 'Ask someone who manages channels in your organisation to create one.'}</p>
        </section>
      ) : d.schedules.map((s) => (
        // An organisation-wide schedule is not a confined caller's to change or cover (the server refuses it).
        <ScheduleCard key={s.id} schedule={s} data={d} manage={manage && (!confined || s.workspaceId !== null)}
          people={members.data ?? s.participants} />
      ))}
      {(d.escalationPolicies.length > 0 || manage) && (
        <PolicyList policies={d.escalationPolicies} monitors={monitorNames} manage={manage} />
      )}
    </>
  );
}
