import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { channelKind, CONFIRMATION_NOTE } from '../lib/channelKinds';
import { Field } from './Field';
import { ChannelTargetField } from './ChannelTargetField';
import { FormError, reasonAt } from './FormError';

type Channel = Schema<'Channel'>;
type Change = Schema<'UpdateChannelBody'>;

/**
 * Changes a channel's name and, for the kinds the API creates, its target
 * (the kind never changes; an enrolled number cannot). A target the server
 * masks (a credential) is not shown here: the field starts empty and empty
 * keeps it. Only what changed is sent; nothing changed closes the form.
 * `onDone` gets what to tell the person, or null on Cancel.
 */
export function ChannelEditForm({ channel: c, onDone }: { channel: Channel; onDone: (said: string | null) => void }) {
  const qc = useQueryClient();
  const kind = channelKind(c.kind);
  const [name, setName] = useState(c.name);
  const [target, setTarget] = useState(kind?.shownWhole ? c.target : '');
  const save = useMutation({
    mutationFn: (body: Change) => ok(api.PATCH('/channels/{id}', { params: { path: { id: c.id } }, body })),
    onSuccess: (_r, body) => {
      // A new address is unconfirmed again, which the setup checklist's "a channel that can deliver" reads.
      void qc.invalidateQueries({ queryKey: keys.channels });
      void qc.invalidateQueries({ queryKey: keys.setup });
      onDone(body.target !== undefined && c.kind === 'email' ? `Saved. ${CONFIRMATION_NOTE}` : 'Saved.');
    },
  });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    const body: Change = {};
    if (name.trim() !== c.name) body.name = name;
    const t = target.trim();
    if (kind && t !== '' && !(kind.shownWhole && t === c.target)) body.target = t;
    if (Object.keys(body).length === 0) onDone(null);
    else save.mutate(body);
  };
  return (
    <form onSubmit={submit} aria-label={`Edit ${c.name}`}>
      <Field label="Channel name" error={reasonAt(save.error, 'name')}>
        {/* The form opens on a press of Edit: the first field takes the focus so typing can start. */}
        <input required maxLength={100} autoFocus value={name} onChange={(x) => setName(x.target.value)} />
      </Field>
      {kind ? (
        <ChannelTargetField kind={c.kind} value={target} onChange={setTarget} error={reasonAt(save.error, 'target')} required={kind.shownWhole}
          hint={kind.shownWhole ? (c.kind === 'email' ? 'A new address is unconfirmed until it agrees.' : undefined) : `Now ${c.target} (not shown whole: it is a credential). Leave empty to keep it.`} />
      ) : (
        <p className="muted small">Its recipient enrolled {c.target}; only the recipient can change it.</p>
      )}
      <FormError error={save.error} fields={['name', 'target']} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>Save the channel</button>
        <button type="button" className="secondary" onClick={() => onDone(null)}>Cancel</button>
      </div>
    </form>
  );
}
