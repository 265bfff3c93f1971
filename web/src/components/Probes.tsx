import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from './Loading';
import { ErrorView } from './ErrorView';
import { CopyButton } from './CopyButton';
import { ProbeRow } from './ProbeRow';
import { probeRunCommand } from './ProbeForm';

/**
 * The private probes: last seen, version, monitors, revoked; rename and
 * revoke for whom the server allows it. A probe belongs to the whole
 * organisation, so a member confined to workspaces gets no control (the
 * server would refuse it, 403 `workspace_confined`). Adding one is the
 * Hosts page's "Add a probe" (ProbeForm).
 */
export function Probes() {
  const { can, confined } = useMe();
  const probes = useQuery(q.probes());
  const mayEnroll = can('agent:enroll') && !confined;
  const mayRevoke = can('agent:delete') && !confined;
  const command = probeRunCommand('pr_…');
  return (
    <section className="card" aria-labelledby="probes-title">
      <h2 id="probes-title">Private probes</h2>
      {probes.isPending ? <Loading label="Loading probes" /> : probes.isError ? <ErrorView error={probes.error} retry={() => void probes.refetch()} /> : probes.data.length === 0 ? (
        <p>No private probe. {mayEnroll ? 'Add one below, run it' : 'A member who may add probes (and is not limited to workspaces) can add one, to run'} inside a network Vigil cannot reach, and assign monitors to it.</p>
      ) : (
        <ul className="plain">
          {probes.data.map((p) => <ProbeRow key={p.id} probe={p} mayRename={mayEnroll} mayRevoke={mayRevoke} />)}
        </ul>
      )}
      <details>
        <summary>Running a probe</summary>
        <p className="small">A probe runs wherever it can reach your private services, and only needs to reach this server. Start it with the token shown when it was added:</p>
        <pre className="code wrap">{command}</pre>
        <div className="row small"><CopyButton text={command} label="Copy the command" /></div>
        <p className="small">The server's operator can also add and revoke probes from the command line (<code>npm run cli -- probe create</code>, <code>probe revoke</code>; see the README).</p>
      </details>
    </section>
  );
}
