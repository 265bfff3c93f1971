import { useMutation } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { useMe } from '../lib/me';
import { CHANNEL_KINDS } from './ChannelForm';

/** One channel: where it goes, whether it is confirmed and on, a test delivery and a new confirmation request. */
export function ChannelRow({ channel: c }: { channel: Schema<'Channel'> }) {
  const { can } = useMe();
  const test = useMutation({ mutationFn: () => ok(api.POST('/channels/{id}/test', { params: { path: { id: c.id } } })) });
  const confirm = useMutation({ mutationFn: () => ok(api.POST('/channels/{id}/confirmation', { params: { path: { id: c.id } } })) });
  const outcome = test.data ? (test.data.data.delivered ? 'Delivered.' : `Not delivered: ${test.data.data.error ?? 'no reason given'}`)
    : test.error instanceof VigilApiError ? test.error.message : null;
  const label = CHANNEL_KINDS.find(([k]) => k === c.kind)?.[1] ?? c.kind;
  return (
    <li>
      <div className="spread">
        <span><strong>{c.name}</strong> <span className="muted small">{label} · {c.target}</span></span>
        <span className="row small">
          {!c.enabled ? <span className="status paused">Off</span>
            : c.confirmed ? <span className="status up">Confirmed</span> : <span className="status degraded">Not confirmed yet</span>}
        </span>
      </div>
      {can('notification_channel:manage') && (
        <div className="row small">
          <button type="button" className="secondary" disabled={test.isPending} onClick={() => test.mutate()} aria-label={`Send a test to ${c.name}`}>Send a test</button>
          {!c.confirmed && (
            <button type="button" className="secondary" disabled={confirm.isPending} onClick={() => confirm.mutate()} aria-label={`Ask to confirm again: ${c.name}`}>Ask to confirm again</button>
          )}
          <span role="status">{test.isPending ? 'Sending…' : outcome}{confirm.data ? (confirm.data.data.sent ? ' Confirmation request sent.' : ' Nothing to send.') : ''}</span>
        </div>
      )}
    </li>
  );
}
