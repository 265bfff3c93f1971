import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { q } from '../lib/queries';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { StatusBadge } from '../components/StatusBadge';
import { IncidentActions } from '../components/IncidentActions';
import { CommentForm } from '../components/CommentForm';
import { Timeline } from '../components/Timeline';
import { PostmortemEditor } from '../components/PostmortemEditor';
import { formatDateTime, formatDuration } from '../lib/format';

/** One incident: its state and actions, the timeline with comments, and the postmortem once resolved. */
export default function IncidentDetail() {
  const { id = '' } = useParams();
  const incident = useQuery(q.incident(id));
  if (incident.isPending) return <Loading label="Loading the incident" />;
  if (incident.isError) return <ErrorView error={incident.error} retry={() => void incident.refetch()} />;
  const i = incident.data;
  return (
    <>
      <p className="small"><Link to="/incidents">Incidents</Link></p>
      <h1>{i.title}</h1>
      <section className="card" aria-label="State">
        <div className="spread">
          <StatusBadge status={i.status} />
          <IncidentActions incident={i} />
        </div>
        <dl className="facts">
          <dt>Monitor</dt><dd>{i.analyticsSiteId ? i.monitorName : <Link to={`/monitors/${i.monitorId}`}>{i.monitorName}</Link>}</dd>
          <dt>Severity</dt><dd>{i.severity}</dd>
          <dt>Cause</dt><dd>{i.cause.replace(/_/g, ' ')}</dd>
          <dt>Started at</dt><dd><time dateTime={i.startedAt}>{formatDateTime(i.startedAt)}</time></dd>
          {i.acknowledgedAt && <><dt>Acknowledged at</dt><dd><time dateTime={i.acknowledgedAt}>{formatDateTime(i.acknowledgedAt)}</time></dd></>}
          {i.resolvedAt && <><dt>Resolved at</dt><dd><time dateTime={i.resolvedAt}>{formatDateTime(i.resolvedAt)}</time>{i.durationSeconds !== null ? ` after ${formatDuration(i.durationSeconds)}` : ''}</dd></>}
        </dl>
      </section>
      <section className="card" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <Timeline incidentId={i.id} />
        <CommentForm incidentId={i.id} />
      </section>
      <PostmortemEditor incident={i} />
    </>
  );
}
