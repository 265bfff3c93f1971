import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { useMe } from '../lib/me';
import { Field } from './Field';
import { Markdown } from './Markdown';

/** The postmortem of a resolved incident: Markdown with a safe preview; internal, never on a status page. */
export function PostmortemEditor({ incident: i }: { incident: Schema<'IncidentDetail'> }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(i.postmortem?.body ?? '');
  const [preview, setPreview] = useState(false);
  const save = useMutation({
    mutationFn: () => ok(api.PUT('/incidents/{id}/postmortem', { params: { path: { id: i.id } }, body: { body: text } })),
    onSuccess: (r) => { qc.setQueryData(keys.incident(i.id), r.data); setEditing(false); },
  });
  if (i.status !== 'resolved' && !i.postmortem) return null;
  const mayWrite = can('incident:resolve') && i.status === 'resolved';
  const e = save.error instanceof VigilApiError ? save.error : null;
  const submit = (ev: FormEvent) => { ev.preventDefault(); save.mutate(); };
  return (
    <section className="card" aria-labelledby="pm-title">
      <div className="spread">
        <h2 id="pm-title">Postmortem</h2>
        {mayWrite && !editing && <button type="button" className="secondary" onClick={() => { setText(i.postmortem?.body ?? ''); setEditing(true); }}>{i.postmortem ? 'Edit the postmortem' : 'Write the postmortem'}</button>}
      </div>
      {editing ? (
        <form onSubmit={submit}>
          <div className="tabs" role="group" aria-label="Postmortem view">
            <button type="button" aria-pressed={!preview} onClick={() => setPreview(false)}>Write</button>
            <button type="button" aria-pressed={preview} onClick={() => setPreview(true)}>Preview</button>
          </div>
          {preview ? <Markdown text={text} label="Postmortem preview" /> : (
            <Field label="Postmortem (Markdown)" hint="Internal: never shown on a status page." error={e?.fieldReason('body') ?? (e ? e.message : null)}>
              <textarea required maxLength={50000} value={text} onChange={(x) => setText(x.target.value)} />
            </Field>
          )}
          <div className="row">
            <button type="submit" disabled={save.isPending}>Save the postmortem</button>
            <button type="button" className="secondary" onClick={() => setEditing(false)}>Cancel</button>
          </div>
        </form>
      ) : i.postmortem ? <Markdown text={i.postmortem.body} label="Postmortem" />
        : <p className="muted">No postmortem yet.{mayWrite ? ' Write down what happened, why, and what changes so it does not happen again.' : ''}</p>}
    </section>
  );
}
