import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../lib/api';
import { keys } from '../lib/queries';
import { useMe } from '../lib/me';
import { Field } from './Field';

/** Adds a comment to the timeline; published to status pages and feeds when asked and allowed. */
export function CommentForm({ incidentId }: { incidentId: string }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const [text, setText] = useState('');
  const [publish, setPublish] = useState(false);
  const add = useMutation({
    mutationFn: () => ok(api.PATCH('/incidents/{id}', { params: { path: { id: incidentId } }, body: publish ? { comment: text, publish } : { comment: text } })),
    onSuccess: (r) => {
      setText('');
      setPublish(false);
      qc.setQueryData(keys.incident(incidentId), r.data);
      void qc.invalidateQueries({ queryKey: [...keys.incident(incidentId), 'events'] });
    },
  });
  if (!can('incident:comment')) return null;
  const e = add.error instanceof VigilApiError ? add.error : null;
  const submit = (ev: FormEvent) => { ev.preventDefault(); if (text.trim()) add.mutate(); };
  return (
    <form onSubmit={submit} aria-label="Add a comment">
      <h3>Add a comment</h3>
      <Field label="Comment" error={e?.fieldReason('comment') ?? null}>
        <textarea required maxLength={10000} value={text} onChange={(x) => setText(x.target.value)} />
      </Field>
      {can('status_page:manage') && (
        <label className="check"><input type="checkbox" checked={publish} onChange={(x) => setPublish(x.target.checked)} /> Publish on status pages and feeds</label>
      )}
      {e && !e.fieldReason('comment') && <p role="alert" className="error">{e.message}</p>}
      <p><button type="submit" disabled={add.isPending || !text.trim()}>Add the comment</button></p>
    </form>
  );
}
