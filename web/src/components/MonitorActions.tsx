import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { useMe } from '../lib/me';
import { ConfirmButton } from './ConfirmButton';
import { FormError } from './FormError';

/** Pause, resume and delete, for those whose role allows them. */
export function MonitorActions({ monitor: m }: { monitor: Schema<'Monitor'> }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const pause = useMutation({
    mutationFn: (paused: boolean) => ok(api.PATCH('/monitors/{id}', { params: { path: { id: m.id } }, body: { paused } })),
    onSuccess: (r) => {
      qc.setQueryData(keys.monitor(m.id), r.data);
      void qc.invalidateQueries({ queryKey: keys.monitors });
      void qc.invalidateQueries({ queryKey: keys.summary });
    },
  });
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/monitors/{id}', { params: { path: { id: m.id } } })),
    onSuccess: () => {
      qc.setQueryData<Schema<'Monitor'>[]>(keys.monitors, (list) => list?.filter((x) => x.id !== m.id));
      void qc.invalidateQueries({ queryKey: keys.summary });
      navigate('/monitors', { replace: true });
    },
  });
  const paused = m.paused ?? m.status === 'paused';
  return (
    <div className="row">
      {can('monitor:pause') && (
        <button type="button" className="secondary" disabled={pause.isPending} onClick={() => pause.mutate(!paused)}>{paused ? 'Resume' : 'Pause'}</button>
      )}
      {can('monitor:delete') && (
        <ConfirmButton label="Delete" name={`Delete ${m.name}`} question={`Delete ${m.name}? Its history goes with it.`}
          confirmLabel="Delete the monitor" pending={remove.isPending} onConfirm={() => remove.mutate()} />
      )}
      <FormError error={pause.error ?? remove.error} />
    </div>
  );
}
