import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { RecurrenceText } from '../components/RecurrenceText';
import { formatDateTime } from '../lib/format';

/** Maintenance windows: what is in progress and what comes next, each rule in words (read-only in part 1). */
export default function Maintenance() {
  const list = useQuery(q.maintenance());
  return (
    <>
      <h1>Maintenance</h1>
      {list.isPending ? <Loading label="Loading maintenance windows" />
        : list.isError ? <ErrorView error={list.error} retry={() => void list.refetch()} />
          : list.data.length === 0 ? (
            <section className="card"><p>No maintenance window. Plan one with the API (<a href="/docs">API reference</a>, maintenance) to silence alerts while you work.</p></section>
          ) : (
            <section className="card">
              <ul className="plain">
                {list.data.map((m) => (
                  <li key={m.id}>
                    <div className="spread">
                      <strong>{m.title}</strong>
                      {m.active && <span className="status degraded">In progress</span>}
                    </div>
                    <div className="small">
                      {m.recurrenceRule ? <RecurrenceText rule={m.recurrenceRule} timezone={m.timezone} /> : 'Once'}
                      {' · '}{m.monitorIds.length} monitor{m.monitorIds.length === 1 ? '' : 's'}
                      {m.keepChecking ? ' · checks keep running' : ' · checks paused'}
                    </div>
                    <div className="muted small">
                      {m.nextOccurrence
                        ? <>{m.active ? 'Now' : 'Next'}: <time dateTime={m.nextOccurrence.startsAt}>{formatDateTime(m.nextOccurrence.startsAt)}</time> – <time dateTime={m.nextOccurrence.endsAt}>{formatDateTime(m.nextOccurrence.endsAt)}</time></>
                        : 'No occurrence ahead.'}
                    </div>
                  </li>
                ))}
              </ul>
            </section>
          )}
    </>
  );
}
