import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { useMe } from '../lib/me';

/** Acknowledge and resolve, for those whose role allows them. */
export function IncidentActions({ incident: i }: { incident: Schema<'IncidentDetail'> }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const change = useMutation({
    mutationFn: (status: 'acknowledged' | 'resolved') => ok(api.PATCH('/incidents/{id}', { params: { path: { id: i.id } }, body: { status } })),
    onSuccess: (r) => {
      qc.setQueryData(keys.incident(i.id), r.data);
      void qc.invalidateQueries({ queryKey: [...keys.incident(i.id), 'events'] });
      void qc.invalidateQueries({ queryKey: keys.incidents });
      void qc.invalidateQueries({ queryKey: keys.summary });
    },
  });
  const error = change.error instanceof VigilApiError ? change.error.message : null;
  return (
    <div className="row">
      {can('incident:acknowledge') && i.status !== 'acknowledged' && i.status !== 'resolved' && (
        <button type="button" disabled={change.isPending} onClick={() => change.mutate('acknowledged')}>Acknowledge</button>
      )}
      {can('incident:resolve') && i.status !== 'resolved' && (
        <button type="button" className="secondary" disabled={change.isPending} onClick={() => change.mutate('resolved')}>Resolve</button>
      )}
      {error && <span role="alert" className="error small">{error}</span>}
    </div>
  );
}
