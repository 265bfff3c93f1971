import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { formatRelative } from '../lib/format';
import { Loading } from './Loading';
import { ErrorView } from './ErrorView';

/**
 * The private probes: last seen, version, monitors, revoked. The API only
 * lists them — the server's operator creates and revokes them from the
 * command line (README), so the page gives the commands, ready for this
 * organisation and this server, instead of controls.
 */
export function Probes() {
  const { me } = useMe();
  const probes = useQuery(q.probes());
  const [copied, setCopied] = useState(false);
  const commands = [
    `npm run cli -- probe create --org ${me.organization.id} --name probe-1`,
    `npm run probe -- --server ${window.location.origin} --token pr_…`,
    'npm run cli -- probe revoke --probe prb_…',
  ].join('\n');
  return (
    <section className="card" aria-labelledby="probes-title">
      <h2 id="probes-title">Private probes</h2>
      {probes.isPending ? <Loading label="Loading probes" /> : probes.isError ? <ErrorView error={probes.error} retry={() => void probes.refetch()} /> : probes.data.length === 0 ? (
        <p>No private probe. Run one inside a network Vigil cannot reach (<code>npm run probe</code>, see below) and assign monitors to it.</p>
      ) : (
        <ul className="plain">
          {probes.data.map((p) => (
            <li key={p.id} className="spread">
              <span className="row">
                <strong>{p.name}</strong>
                {p.revoked && <span className="status paused">Revoked</span>}
                <span className="muted small">{[p.id, p.hostname, p.version && `version ${p.version}`].filter(Boolean).join(' · ')}</span>
              </span>
              <span className="muted small">
                {p.monitorCount} monitor{p.monitorCount === 1 ? '' : 's'} · {p.lastSeenAt ? <>seen <time dateTime={p.lastSeenAt}>{formatRelative(p.lastSeenAt)}</time></> : 'never connected'}
              </span>
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>Adding or revoking a probe</summary>
        <p className="small">The server's operator creates a probe from the command line; its token is printed once. The probe runs with that token wherever it can reach your private services, and only needs to reach this server. Revoking stops its work at once.</p>
        <pre className="code">{commands}</pre>
        <div className="row small">
          <button type="button" className="secondary" onClick={() => { void navigator.clipboard.writeText(commands).then(() => setCopied(true)); }}>Copy the commands</button>
          <span role="status">{copied ? 'Copied.' : ''}</span>
        </div>
      </details>
    </section>
  );
}
