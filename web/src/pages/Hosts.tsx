import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { StatusBadge } from '../components/StatusBadge';
import { formatRelative } from '../lib/format';

/** The machines monitors run on, and the private probes that check from inside other networks (read-only in part 1). */
export default function Hosts() {
  const hosts = useQuery(q.hosts());
  const probes = useQuery(q.probes());
  return (
    <>
      <h1>Hosts and probes</h1>
      <section className="card" aria-labelledby="hosts-title">
        <h2 id="hosts-title">Hosts</h2>
        {hosts.isPending ? <Loading label="Loading hosts" /> : hosts.isError ? <ErrorView error={hosts.error} /> : hosts.data.length === 0 ? (
          <p>No host yet. Name the machines your monitors run on (API: <a href="/docs">hosts</a>) to see at a glance which one is in trouble.</p>
        ) : (
          <ul className="plain">
            {hosts.data.map((h) => (
              <li key={h.id} className="spread">
                <span className="row">{h.status ? <StatusBadge status={h.status} /> : <span className="muted small">No monitor of its own</span>}<strong>{h.name}</strong>{h.address && <span className="muted small">{h.address}</span>}</span>
                <span className="muted small">{h.pinned} monitor{h.pinned === 1 ? '' : 's'} of its own, {h.spanning} shared</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="card" aria-labelledby="probes-title">
        <h2 id="probes-title">Private probes</h2>
        {probes.isPending ? <Loading label="Loading probes" /> : probes.isError ? <ErrorView error={probes.error} /> : probes.data.length === 0 ? (
          <p>No private probe. Run one inside a network Vigil cannot reach (<code>npm run probe</code>, see the README) and assign monitors to it.</p>
        ) : (
          <ul className="plain">
            {probes.data.map((p) => (
              <li key={p.id} className="spread">
                <span className="row"><strong>{p.name}</strong>{p.revoked && <span className="status paused">Revoked</span>}<span className="muted small">{p.hostname ?? ''}{p.version ? ` · ${p.version}` : ''}</span></span>
                <span className="muted small">
                  {p.monitorCount} monitor{p.monitorCount === 1 ? '' : 's'} · {p.lastSeenAt ? <>seen <time dateTime={p.lastSeenAt}>{formatRelative(p.lastSeenAt)}</time></> : 'never connected'}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
