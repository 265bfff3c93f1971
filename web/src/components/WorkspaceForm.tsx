import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { Field } from './Field';
import { FormError, reasonAt } from './FormError';

/**
 * Creates a workspace, or renames `workspace` (its name and client
 * reference; the slug never changes). `onDone` closes a rename.
 */
export function WorkspaceForm({ workspace: w, onDone }: { workspace?: Schema<'Workspace'>; onDone?: () => void }) {
  const qc = useQueryClient();
  const [name, setName] = useState(w?.name ?? '');
  const [clientReference, setClientReference] = useState(w?.clientReference ?? '');
  const save = useMutation({
    mutationFn: () => {
      // An empty client reference clears it on a rename, and is left out of a creation.
      const ref = clientReference.trim() || null;
      return w
        ? ok(api.PATCH('/workspaces/{id}', { params: { path: { id: w.id } }, body: { name, clientReference: ref } }))
        : ok(api.POST('/workspaces', { body: { name, ...(ref ? { clientReference: ref } : {}) } }));
    },
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: keys.workspaces });
      if (!w) { setName(''); setClientReference(''); }
      onDone?.();
    },
  });
  const submit = (ev: FormEvent) => { ev.preventDefault(); save.mutate(); };
  const created = !w && save.isSuccess ? save.data.data : null;
  return (
    <form onSubmit={submit} aria-label={w ? `Rename ${w.name}` : 'New workspace'}>
      <Field label="Name" error={reasonAt(save.error, 'name')}>
        <input required maxLength={80} value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <Field label="Client reference" hint="Optional: your own reference, such as a client number." error={reasonAt(save.error, 'clientReference')}>
        <input maxLength={200} value={clientReference} onChange={(e) => setClientReference(e.target.value)} />
      </Field>
      <FormError error={save.error} fields={['name', 'clientReference']} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>{w ? 'Save' : 'Create the workspace'}</button>
        {onDone && <button type="button" className="secondary" onClick={onDone}>Cancel</button>}
      </div>
      {!w && <p role="status" className="small">{created ? `Workspace “${created.name}” created.` : ''}</p>}
    </form>
  );
}
