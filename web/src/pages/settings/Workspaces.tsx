import { useQuery } from '@tanstack/react-query';
import { q } from '../../lib/queries';
import { useMe } from '../../lib/me';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { WorkspaceRow } from '../../components/WorkspaceRow';
import { WorkspaceForm } from '../../components/WorkspaceForm';
import './people.css';

/**
 * Settings → Workspaces: the workspaces the server shows the caller. Making,
 * renaming and deleting them is an organisation-wide change: it needs
 * `workspace:update` and a caller not confined to workspaces.
 */
export default function Workspaces() {
  const { can, confined } = useMe();
  const workspaces = useQuery(q.workspaces());
  const editable = can('workspace:update') && !confined;
  return (
    <div className="people">
      <h2>Workspaces</h2>
      <p className="muted">Workspaces keep monitors, incidents, channels and people of one team or client apart; a person can be confined to some of them.</p>
      {workspaces.isPending ? <Loading label="Loading workspaces" />
        : workspaces.isError ? <ErrorView error={workspaces.error} retry={() => void workspaces.refetch()} />
          : (
            <section className="card" aria-labelledby="workspaces-title">
              <h3 id="workspaces-title">{confined ? 'Your workspaces' : 'All workspaces'} ({workspaces.data.length})</h3>
              <ul className="plain">{workspaces.data.map((w) => <WorkspaceRow key={w.id} workspace={w} editable={editable} />)}</ul>
            </section>
          )}
      {editable ? (
        <section className="card" aria-labelledby="new-workspace-title">
          <h3 id="new-workspace-title">New workspace</h3>
          <WorkspaceForm />
        </section>
      ) : can('workspace:update') && (
        <p className="muted small">Creating, renaming and deleting workspaces concern the whole organisation: someone not confined to workspaces does it.</p>
      )}
    </div>
  );
}
