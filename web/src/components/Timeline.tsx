import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { formatDateTime } from '../lib/format';
import { Loading } from './Loading';

const WHAT: Record<string, string> = {
  opened: 'Opened', acknowledged: 'Acknowledged', resolved: 'Resolved', reopened: 'Reopened', suppressed: 'Suppressed',
  comment: 'Comment', escalation: 'Escalation', notification: 'Notification', status_changed: 'Status changed',
};

/** The incident's events, oldest first. */
export function Timeline({ incidentId }: { incidentId: string }) {
  const events = useQuery(q.events(incidentId));
  if (events.isPending) return <Loading label="Loading the timeline" />;
  if (events.isError) return <p className="error">The timeline could not be loaded.</p>;
  return (
    <ol className="timeline">
      {events.data.map((e) => (
        <li key={e.id}>
          <strong>{WHAT[e.kind] ?? e.kind}</strong>{e.public ? <span className="muted small"> · published</span> : null}
          {' '}<time className="small" dateTime={e.at}>{formatDateTime(e.at)}</time>
          {e.actor && <span className="muted small"> · {e.actor.name ?? e.actor.type}</span>}
          {e.message && <div>{e.message}</div>}
        </li>
      ))}
    </ol>
  );
}
