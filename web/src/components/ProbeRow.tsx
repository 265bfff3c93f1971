import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { formatRelative } from '../lib/format';
import { ConfirmButton } from './ConfirmButton';
import { Field } from './Field';
import { FormError, reasonAt } from './FormError';

type Probe = Schema<'Probe'>;

/**
 * One private probe: where it runs, its version, monitors and last contact;
 * rename (`mayRename`: agent:enroll) and revoke after a confirmation
 * (`mayRevoke`: agent:delete). Both answer the probe as it now is, which
 * replaces it in the cached list: no read again.
 */
export function ProbeRow({ probe: p, mayRename, mayRevoke }: { probe: Probe; mayRename: boolean; mayRevoke: boolean }) {
  const qc = useQueryClient();
  const [renaming, setRenaming] = useState(false);
  const renameButton = useRef<HTMLButtonElement>(null);
  const back = useRef(false);
  useEffect(() => { if (!renaming && back.current) { back.current = false; renameButton.current?.focus(); } }, [renaming]);
  const replace = (next: Probe) => qc.setQueryData<Probe[]>(keys.probes, (list) => list?.map((x) => (x.id === next.id ? next : x)));
  const revoke = useMutation({
    mutationFn: () => ok(api.DELETE('/probes/{id}', { params: { path: { id: p.id } } })).then((r) => r.data),
    onSuccess: replace,
  });
  const close = () => { back.current = true; setRenaming(false); };
  const monitors = `${p.monitorCount} monitor${p.monitorCount === 1 ? '' : 's'}`;
  return (
    <li>
      <div className="spread">
        <span className="row">
          <strong>{p.name}</strong>
          {p.revoked && <span className="status paused">Revoked</span>}
          <span className="muted small">{[p.id, p.hostname, p.version && `version ${p.version}`].filter(Boolean).join(' · ')}</span>
        </span>
        <span className="muted small">
          {monitors} · {p.lastSeenAt ? <>seen <time dateTime={p.lastSeenAt}>{formatRelative(p.lastSeenAt)}</time></> : 'never connected'}
        </span>
      </div>
      {renaming ? <RenameForm probe={p} onSaved={(next) => { replace(next); close(); }} onCancel={close} /> : (mayRename || (mayRevoke && !p.revoked)) && (
        <div className="row small">
          {mayRename && <button ref={renameButton} type="button" className="secondary" onClick={() => { revoke.reset(); setRenaming(true); }} aria-label={`Rename ${p.name}`}>Rename</button>}
          {mayRevoke && !p.revoked && (
            <ConfirmButton label="Revoke" name={`Revoke ${p.name}`} confirmLabel="Revoke the probe" pending={revoke.isPending} onConfirm={() => revoke.mutate()}
              question={`Revoke ${p.name}? Its token stops working at once${p.monitorCount ? `; its ${monitors} are checked by nobody until created anew on another probe or none` : ''}. This cannot be undone.`} />
          )}
        </div>
      )}
      <FormError error={revoke.error} />
    </li>
  );
}

/** The inline rename: the name only (nothing else of a probe changes); the server's refusal at the field or below. */
function RenameForm({ probe: p, onSaved, onCancel }: { probe: Probe; onSaved: (p: Probe) => void; onCancel: () => void }) {
  const [name, setName] = useState(p.name);
  const save = useMutation({
    mutationFn: () => ok(api.PATCH('/probes/{id}', { params: { path: { id: p.id } }, body: { name } })).then((r) => r.data),
    onSuccess: onSaved,
  });
  const submit = (ev: FormEvent) => { ev.preventDefault(); if (name.trim() === p.name) onCancel(); else save.mutate(); };
  return (
    <form onSubmit={submit} aria-label={`Rename ${p.name}`} onKeyDown={(e) => { if (e.key === 'Escape') onCancel(); }}>
      <Field label="New name" error={reasonAt(save.error, 'name')}>
        {/* Opened by a press of Rename: the field takes the focus so typing can start. */}
        <input required maxLength={100} autoFocus value={name} onChange={(x) => setName(x.target.value)} />
      </Field>
      <FormError error={save.error} fields={['name']} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>Save the name</button>
        <button type="button" className="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
