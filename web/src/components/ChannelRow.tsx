import { useEffect, useRef, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { useMe } from '../lib/me';
import { channelKind } from '../lib/channelKinds';
import { ChannelEditForm } from './ChannelEditForm';
import { ConfirmButton } from './ConfirmButton';
import { FormError } from './FormError';

type Channel = Schema<'Channel'>;

/**
 * One channel: where it goes, whether it is confirmed and on; a test
 * delivery, a new confirmation request, switching it off or on, editing its
 * name and target (ChannelEditForm) and deleting it. A member confined to workspaces changes only its workspaces'
 * channels, never an organisation-wide one (the server refuses it).
 */
export function ChannelRow({ channel: c }: { channel: Channel }) {
  const { can, confined } = useMe();
  const qc = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  // Closing the form gives the focus back to Edit, so the keyboard stays where it was.
  const editButton = useRef<HTMLButtonElement>(null);
  const back = useRef(false);
  useEffect(() => { if (!editing && back.current) { back.current = false; editButton.current?.focus(); } }, [editing]);
  const test = useMutation({ mutationFn: () => ok(api.POST('/channels/{id}/test', { params: { path: { id: c.id } } })) });
  const confirm = useMutation({ mutationFn: () => ok(api.POST('/channels/{id}/confirmation', { params: { path: { id: c.id } } })) });
  // The setup checklist's "a channel that can deliver" depends on a channel being on and present.
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => ok(api.PATCH('/channels/{id}', { params: { path: { id: c.id } }, body: { enabled } })),
    onSuccess: (_r, enabled) => {
      qc.setQueryData<Channel[]>(keys.channels, (list) => list?.map((x) => (x.id === c.id ? { ...x, enabled } : x)));
      void qc.invalidateQueries({ queryKey: keys.setup });
    },
  });
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/channels/{id}', { params: { path: { id: c.id } } })),
    onSuccess: () => {
      qc.setQueryData<Channel[]>(keys.channels, (list) => list?.filter((x) => x.id !== c.id));
      void qc.invalidateQueries({ queryKey: keys.setup });
    },
  });
  const outcome = test.data ? (test.data.data.delivered ? 'Delivered.' : `Not delivered: ${test.data.data.error ?? 'no reason given'}`)
    : test.error instanceof VigilApiError ? test.error.message : null;
  const label = channelKind(c.kind)?.label ?? c.kind;
  const manage = can('notification_channel:manage') && !(confined && c.workspaceId === null);
  return (
    <li>
      <div className="spread">
        <span><strong>{c.name}</strong> <span className="muted small">{label} · {c.target}</span></span>
        <span className="row small">
          {!c.enabled ? <span className="status paused">Off</span>
            : c.confirmed ? <span className="status up">Confirmed</span> : <span className="status degraded">Not confirmed yet</span>}
        </span>
      </div>
      {manage && editing && (
        <ChannelEditForm channel={c} onDone={(said) => { back.current = true; setEditing(false); if (said) setSaved(said); }} />
      )}
      {manage && !editing && (
        <div className="row small">
          <button type="button" className="secondary" disabled={test.isPending} onClick={() => test.mutate()} aria-label={`Send a test to ${c.name}`}>Send a test</button>
          {!c.confirmed && (
            <button type="button" className="secondary" disabled={confirm.isPending} onClick={() => confirm.mutate()} aria-label={`Ask to confirm again: ${c.name}`}>Ask to confirm again</button>
          )}
          <button type="button" className="secondary" disabled={toggle.isPending} onClick={() => toggle.mutate(!c.enabled)}
            aria-label={`${c.enabled ? 'Switch off' : 'Switch on'} ${c.name}`}>{c.enabled ? 'Switch off' : 'Switch on'}</button>
          <button ref={editButton} type="button" className="secondary" onClick={() => { setSaved(null); setEditing(true); }} aria-label={`Edit ${c.name}`}>Edit</button>
          <ConfirmButton label="Delete" name={`Delete ${c.name}`} question={`Delete ${c.name}? It is removed from every monitor.`}
            confirmLabel="Delete the channel" pending={remove.isPending} onConfirm={() => remove.mutate()} />
          <span role="status">{test.isPending ? 'Sending…' : outcome}{confirm.data ? (confirm.data.data.sent ? ' Confirmation request sent.' : ' Nothing to send.') : ''}{saved ? ` ${saved}` : ''}</span>
        </div>
      )}
      {!manage && can('notification_channel:manage') && <p className="muted small">Organisation-wide: changed by members who are not limited to workspaces.</p>}
      <FormError error={toggle.error ?? remove.error ?? (confirm.error instanceof VigilApiError ? confirm.error : null)} />
    </li>
  );
}
