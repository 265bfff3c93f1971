import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../lib/api';
import { keys, q } from '../lib/queries';
import { useMe } from '../lib/me';
import { CHANNEL_KINDS, CONFIRMATION_NOTE, type ChannelKind as Kind } from '../lib/channelKinds';
import { Field } from './Field';
import { ChannelTargetField } from './ChannelTargetField';

/** Creates a channel; a webhook's signing secret is shown once, here. */
export function ChannelForm() {
  const qc = useQueryClient();
  const { confined } = useMe();
  const workspaces = useQuery(q.workspaces());
  const [kind, setKind] = useState<Kind>('email');
  const [name, setName] = useState('');
  const [target, setTarget] = useState('');
  const [workspaceId, setWorkspaceId] = useState('');
  // A member confined to workspaces cannot make an organisation-wide channel: its first workspace is the default.
  const workspace = workspaceId || (confined ? workspaces.data?.[0]?.id ?? '' : '');
  const create = useMutation({
    mutationFn: () => ok(api.POST('/channels', { body: { kind, name, target, workspaceId: workspace || null } })),
    onSuccess: () => { setName(''); setTarget(''); void qc.invalidateQueries({ queryKey: keys.channels }); void qc.invalidateQueries({ queryKey: keys.setup }); },
  });
  const e = create.error instanceof VigilApiError ? create.error : null;
  const secret = create.data?.data.secret ?? null;
  const submit = (ev: FormEvent) => { ev.preventDefault(); create.mutate(); };
  return (
    <section className="card" aria-labelledby="new-channel">
      <h2 id="new-channel">Add a channel</h2>
      <form onSubmit={submit}>
        <Field label="Channel kind" error={e?.fieldReason('kind') ?? null}>
          <select value={kind} onChange={(x) => setKind(x.target.value as Kind)}>
            {CHANNEL_KINDS.map((k) => <option key={k.kind} value={k.kind}>{k.label}</option>)}
          </select>
        </Field>
        <Field label="Channel name" error={e?.fieldReason('name') ?? null}>
          <input required maxLength={100} value={name} onChange={(x) => setName(x.target.value)} />
        </Field>
        <ChannelTargetField kind={kind} value={target} onChange={setTarget} error={e?.fieldReason('target') ?? null} />
        <Field label="For" hint={confined ? 'The workspace the channel belongs to.' : 'A channel of one workspace, or of the whole organisation.'} error={e?.fieldReason('workspaceId') ?? null}>
          <select value={workspace} onChange={(x) => setWorkspaceId(x.target.value)}>
            {!confined && <option value="">The whole organisation</option>}
            {(workspaces.data ?? []).map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
          </select>
        </Field>
        {e && !e.details && <p role="alert" className="error">{e.message}</p>}
        <button type="submit" disabled={create.isPending}>Add the channel</button>
      </form>
      {create.data && (
        <div role="status" className="notice">
          <p>Channel “{create.data.data.name}” added.{create.data.data.kind === 'email' ? ` ${CONFIRMATION_NOTE}` : ''}</p>
          {secret && (
            <Field label="Signing secret (shown once)" hint="Deliveries are signed with it; keep it where your receiver checks signatures.">
              <input readOnly value={secret} onFocus={(x) => x.target.select()} />
            </Field>
          )}
        </div>
      )}
    </section>
  );
}
