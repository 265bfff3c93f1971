import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { MaintenanceRow } from '../components/MaintenanceRow';

/** Maintenance windows in progress or to come, each rule in words; planning, changing and deleting them for those who may. */
export default function Maintenance() {
  const { can } = useMe();
  const list = useQuery(q.maintenance());
  const manage = can('maintenance:manage');
  return (
    <>
      <div className="spread page-head">
        <h1>Maintenance</h1>
        {manage && <Link className="button" to="/maintenance/new">Plan a window</Link>}
      </div>
      {list.isPending ? <Loading label="Loading maintenance windows" />
        : list.isError ? <ErrorView error={list.error} retry={() => void list.refetch()} />
          : list.data.length === 0 ? (
            <section className="card">
              <p>No maintenance window. {manage
                ? <>Plan one to silence alerts while you work: <Link to="/maintenance/new">plan a window</Link>.</>
                : 'Ask a member of your organisation to plan one before work that would alert.'}</p>
            </section>
          ) : (
            <section className="card" aria-label="Maintenance windows">
              <ul className="plain">{list.data.map((m) => <MaintenanceRow key={m.id} window={m} />)}</ul>
            </section>
          )}
    </>
  );
}
