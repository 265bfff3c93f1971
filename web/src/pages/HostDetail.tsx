import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys, q } from '../lib/queries';
import { useMe } from '../lib/me';
import { formatDateTime } from '../lib/format';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { StatusBadge } from '../components/StatusBadge';
import { HostForm } from '../components/HostForm';
import { HostMonitors } from '../components/HostMonitors';
import { ConfirmButton } from '../components/ConfirmButton';
import { FormError } from '../components/FormError';

/** One host: what is known of it, its monitors; edit and delete for those allowed. */
export default function HostDetail() {
  const { id = '' } = useParams();
  const { can, confined } = useMe();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [deleted, setDeleted] = useState(false);
  // Once deleted, the host is not read again (it would be a 404) while the page goes away.
  const host = useQuery({ ...q.host(id), enabled: !deleted });
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/hosts/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      setDeleted(true);
      qc.removeQueries({ queryKey: keys.host(id) });
      // The list, and other hosts whose shared monitors may now be theirs alone.
      void qc.invalidateQueries({ queryKey: keys.hosts });
      navigate('/hosts', { replace: true });
    },
  });
  if (host.isPending) return <Loading label="Loading the host" />;
  if (host.isError) return <ErrorView error={host.error} retry={() => void host.refetch()} />;
  const h = host.data;
  // A host belongs to the whole organisation: a member confined to workspaces cannot rename or delete it.
  const manage = can('monitor:update') && !confined;
  return (
    <>
      <p className="small"><Link to="/hosts">Hosts and probes</Link> › Host</p>
      <div className="spread head">
        <h1>{h.name}</h1>
        {manage && !editing && (
          <div className="row">
            <button type="button" className="secondary" onClick={() => setEditing(true)}>Edit</button>
            <ConfirmButton label="Delete" name={`Delete ${h.name}`} question={`Delete ${h.name}? Its monitors keep running; they are only detached.`}
              confirmLabel="Delete the host" pending={remove.isPending} onConfirm={() => remove.mutate()} />
          </div>
        )}
      </div>
      <FormError error={remove.error} />
      <section className="card" aria-label="Host">
        {editing ? <HostForm host={h} onDone={() => setEditing(false)} /> : (
          <dl className="facts">
            <dt>Status</dt>
            <dd>{h.status ? <StatusBadge status={h.status} /> : 'No monitor of its own'}</dd>
            <dt>Monitors</dt>
            <dd>{h.pinned} of its own, {h.spanning} shared with other hosts</dd>
            <dt>Address</dt><dd>{h.address ?? '—'}</dd>
            <dt>Provider</dt><dd>{h.provider ?? '—'}</dd>
            {h.notes && <><dt>Notes</dt><dd className="pre">{h.notes}</dd></>}
            <dt>Added</dt><dd><time dateTime={h.createdAt}>{formatDateTime(h.createdAt)}</time></dd>
          </dl>
        )}
      </section>
      <HostMonitors host={h} />
    </>
  );
}
