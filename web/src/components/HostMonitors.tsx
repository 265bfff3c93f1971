import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { keys, q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Field } from './Field';
import { FormError } from './FormError';
import { StatusBadge } from './StatusBadge';
import { KIND_LABELS } from './MonitorFilters';
import { ErrorView } from './ErrorView';

/** A host's monitors, each linked to its page and to the other hosts it runs on; attach and detach for those who may change monitors. */
export function HostMonitors({ host }: { host: Schema<'HostDetail'> }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const editable = can('monitor:update');
  // The monitor list is read only for those who can attach one.
  const monitors = useQuery({ ...q.monitors(), enabled: editable });
  const [monitorId, setMonitorId] = useState('');
  // Attaching or detaching changes this host, the list's counts and the other hosts' `alsoOn`: every host read.
  const done = () => void qc.invalidateQueries({ queryKey: keys.hosts });
  const attach = useMutation({
    mutationFn: (id: string) => ok(api.POST('/hosts/{id}/monitors', { params: { path: { id: host.id } }, body: { monitorId: id } })),
    onSuccess: () => { setMonitorId(''); done(); },
  });
  const detach = useMutation({
    mutationFn: (id: string) => ok(api.DELETE('/hosts/{id}/monitors', { params: { path: { id: host.id }, query: { monitorId: id } } })),
    onSuccess: done,
  });
  const attached = new Set(host.monitors.map((m) => m.id));
  const choices = (monitors.data ?? []).filter((m) => !attached.has(m.id)).sort((a, b) => a.name.localeCompare(b.name));
  const attachError = attach.error instanceof VigilApiError ? attach.error : null;
  const submit = (ev: FormEvent) => { ev.preventDefault(); if (monitorId) attach.mutate(monitorId); };
  return (
    <section className="card" aria-labelledby="host-monitors">
      <h2 id="host-monitors">Monitors on this host</h2>
      {host.monitors.length === 0 ? (
        <p>No monitor runs on this host yet.{editable ? ' Attach the ones that check it below; its status then follows theirs.' : ''}</p>
      ) : (
        <ul className="plain">
          {host.monitors.map((m) => (
            <li key={m.id} className="spread">
              <span className="row">
                <StatusBadge status={m.status} />
                <Link to={`/monitors/${m.id}`}>{m.name}</Link>
                <span className="muted small">
                  {KIND_LABELS[m.kind] ?? m.kind} · {m.pinned ? 'only on this host' : <>also on {m.alsoOn.map((o, i) => <span key={o.id}>{i > 0 && ', '}<Link to={`/hosts/${o.id}`}>{o.name}</Link></span>)}</>}
                </span>
              </span>
              {editable && (
                <button type="button" className="secondary" disabled={detach.isPending} onClick={() => detach.mutate(m.id)} aria-label={`Detach ${m.name}`}>Detach</button>
              )}
            </li>
          ))}
        </ul>
      )}
      <FormError error={detach.error} />
      {editable && monitors.data && choices.length === 0 && host.monitors.length > 0 && <p className="muted small">Every monitor you can see is attached.</p>}
      {editable && monitors.isError && <ErrorView error={monitors.error} retry={() => void monitors.refetch()} />}
      {editable && !monitors.isError && (!monitors.data || choices.length > 0) && (
        <form onSubmit={submit} className="filters attach">
          <Field label="Monitor to attach" error={attachError?.fieldReason('monitorId') ?? null}>
            <select value={monitorId} onChange={(x) => setMonitorId(x.target.value)} disabled={!monitors.data}>
              <option value="">{monitors.data ? 'Choose a monitor' : 'Loading monitors…'}</option>
              {choices.map((m) => <option key={m.id} value={m.id}>{m.name} ({m.workspace.name})</option>)}
            </select>
          </Field>
          <button type="submit" disabled={!monitorId || attach.isPending}>Attach</button>
          <FormError error={attach.error} fields={['monitorId']} />
        </form>
      )}
    </section>
  );
}
