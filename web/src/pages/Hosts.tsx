import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { StatusBadge } from '../components/StatusBadge';
import { HostForm } from '../components/HostForm';
import { Probes } from '../components/Probes';
import { ProbeForm } from '../components/ProbeForm';

/** The machines monitors run on (each with its own page), and the private probes that check from inside other networks. */
export default function Hosts() {
  const { can, confined } = useMe();
  const hosts = useQuery(q.hosts());
  return (
    <>
      <h1>Hosts and probes</h1>
      <section className="card" aria-labelledby="hosts-title">
        <h2 id="hosts-title">Hosts</h2>
        {hosts.isPending ? <Loading label="Loading hosts" /> : hosts.isError ? <ErrorView error={hosts.error} retry={() => void hosts.refetch()} /> : hosts.data.length === 0 ? (
          <p>No host yet. {can('monitor:create') ? 'Add the machines your monitors run on below' : 'A member of your organisation can name the machines your monitors run on'} to see at a glance which one is in trouble.</p>
        ) : (
          <ul className="plain">
            {hosts.data.map((h) => (
              <li key={h.id} className="spread">
                <span className="row">
                  {h.status ? <StatusBadge status={h.status} /> : <span className="muted small">No monitor of its own</span>}
                  <Link to={`/hosts/${h.id}`}><strong>{h.name}</strong></Link>
                  {h.address && <span className="muted small">{h.address}</span>}
                </span>
                <span className="muted small">{h.pinned} monitor{h.pinned === 1 ? '' : 's'} of its own, {h.spanning} shared</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      {can('monitor:create') && (
        <section className="card" aria-labelledby="new-host">
          <h2 id="new-host">Add a host</h2>
          <HostForm />
        </section>
      )}
      <Probes />
      {/* A probe belongs to the whole organisation: a member confined to workspaces would be refused (403 workspace_confined). */}
      {can('agent:enroll') && !confined && (
        <section className="card" aria-labelledby="new-probe">
          <h2 id="new-probe">Add a probe</h2>
          <ProbeForm />
        </section>
      )}
    </>
  );
}
