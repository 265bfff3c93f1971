import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { q } from '../lib/queries';
import { StatusBadge } from './StatusBadge';
import { formatRelative } from '../lib/format';

/** Unresolved incidents, newest first: what needs someone now. */
export function OpenIncidents() {
  const incidents = useQuery(q.incidents());
  const open = (incidents.data ?? []).filter((i) => i.status !== 'resolved');
  if (!incidents.data) return null;
  return (
    <section className="card" aria-labelledby="open-incidents">
      <h2 id="open-incidents">Open incidents</h2>
      {open.length === 0 ? <p className="muted">No open incidents. All quiet.</p> : (
        <ul className="plain">
          {open.map((i) => (
            <li key={i.id} className="spread">
              <span className="row"><StatusBadge status={i.status} /><Link to={`/incidents/${i.id}`}>{i.title}</Link></span>
              <span className="muted small">{i.monitorName} · started <time dateTime={i.startedAt}>{formatRelative(i.startedAt)}</time></span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
