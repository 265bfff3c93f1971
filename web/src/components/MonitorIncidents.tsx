import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { q } from '../lib/queries';
import { StatusBadge } from './StatusBadge';
import { formatDateTime, formatDuration } from '../lib/format';

/** The monitor's incidents among the latest ones (the list read is shared with the incidents page). */
export function MonitorIncidents({ monitorId }: { monitorId: string }) {
  const incidents = useQuery(q.incidents());
  const mine = (incidents.data ?? []).filter((i) => i.monitorId === monitorId);
  return (
    <section className="card" aria-labelledby="mi-title">
      <h2 id="mi-title">Incidents</h2>
      {!incidents.data ? null : mine.length === 0 ? <p className="muted">No incidents recently.</p> : (
        <ul className="plain">
          {mine.map((i) => (
            <li key={i.id} className="spread">
              <span className="row"><StatusBadge status={i.status} /><Link to={`/incidents/${i.id}`}>{i.title}</Link></span>
              <span className="muted small"><time dateTime={i.startedAt}>{formatDateTime(i.startedAt)}</time>{i.durationSeconds !== null ? ` · ${formatDuration(i.durationSeconds)}` : ''}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
