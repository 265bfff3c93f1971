import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { q } from '../lib/queries';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { StatusBadge } from '../components/StatusBadge';
import { formatDateTime, formatDuration } from '../lib/format';

const VIEWS: Array<[string, string]> = [['open', 'Unresolved'], ['resolved', 'Resolved'], ['all', 'All']];

/** The latest incidents (200), unresolved first by default. */
export default function IncidentList() {
  const incidents = useQuery(q.incidents());
  const [params, setParams] = useSearchParams();
  const view = params.get('view') ?? 'open';
  const shown = (incidents.data ?? []).filter((i) => view === 'all' || (view === 'resolved' ? i.status === 'resolved' : i.status !== 'resolved'));
  return (
    <>
      <h1>Incidents</h1>
      <div className="tabs" role="group" aria-label="Show">
        {VIEWS.map(([v, label]) => <button key={v} type="button" aria-pressed={view === v} onClick={() => setParams({ view: v }, { replace: true })}>{label}</button>)}
      </div>
      {incidents.isPending ? <Loading label="Loading incidents" />
        : incidents.isError ? <ErrorView error={incidents.error} retry={() => void incidents.refetch()} />
          : shown.length === 0 ? (
            <section className="card"><p>{view === 'open' ? 'No unresolved incidents: everything is running. Incidents open here when a monitor fails.' : 'No incidents to show.'}</p></section>
          ) : (
            <section className="card">
              <ul className="plain">
                {shown.map((i) => (
                  <li key={i.id} className="spread">
                    <span className="row"><StatusBadge status={i.status} /><Link to={`/incidents/${i.id}`}>{i.title}</Link></span>
                    <span className="muted small">
                      {i.monitorName} · <time dateTime={i.startedAt}>{formatDateTime(i.startedAt)}</time>
                      {i.durationSeconds !== null ? ` · ${formatDuration(i.durationSeconds)}` : ''}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          )}
    </>
  );
}
