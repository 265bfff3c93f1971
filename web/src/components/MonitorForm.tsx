import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { KIND_FIELDS, toConfig } from '../lib/kindFields';
import { KINDS, KIND_LABELS } from './MonitorFilters';
import { Field } from './Field';
import { KindFieldInput } from './KindFieldInput';

type Monitor = Schema<'Monitor'>;

/** The server's reason for each field it refused: `config.url` → `url`, `config.assertions.0.type` → `assertions`. */
function fieldErrors(e: unknown): Record<string, string> {
  if (!(e instanceof VigilApiError) || !e.details) return {};
  const out: Record<string, string> = {};
  const all = e.details.fields.length ? e.details.fields : [{ field: e.details.field, reason: e.details.reason }];
  for (const f of all) {
    const parts = f.field.split('.');
    const key = parts[0] === 'config' && parts[1] ? `config.${parts[1]}` : parts[0]!;
    out[key] ??= f.reason;
  }
  return out;
}

export function MonitorForm({ existing, workspaces }: { existing: Monitor | null; workspaces: Schema<'Workspace'>[] }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [name, setName] = useState(existing?.name ?? '');
  const [kind, setKind] = useState<string>(existing?.kind ?? 'http');
  const [workspaceId, setWorkspaceId] = useState(workspaces.find((w) => w.isDefault)?.id ?? workspaces[0]?.id ?? '');
  const [interval, setInterval] = useState(String(existing?.intervalSeconds ?? 300));
  const [confirmations, setConfirmations] = useState(String(existing?.confirmations ?? 1));
  const [tags, setTags] = useState((existing?.tags ?? []).join(', '));
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [localError, setLocalError] = useState<Record<string, string>>({});

  const save = useMutation({
    mutationFn: async () => {
      const { config, bad } = toConfig(kind, values);
      if (bad) { setLocalError({ [`config.${bad}`]: 'This is not valid JSON.' }); throw new Error('invalid JSON'); }
      setLocalError({});
      const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean);
      const common = { name, intervalSeconds: Number(interval), confirmations: Number(confirmations), tags: tagList };
      if (existing) {
        // The config is never shown again: it is replaced only when a field of it was filled in.
        const body = Object.keys(config).length ? { ...common, config: JSON.stringify(config) } : common;
        return ok(api.PATCH('/monitors/{id}', { params: { path: { id: existing.id } }, body }));
      }
      return ok(api.POST('/monitors', { body: { ...common, kind: kind as Monitor['kind'], workspaceId, config: JSON.stringify(config) } }));
    },
    onSuccess: (r) => {
      void qc.invalidateQueries({ queryKey: keys.monitors });
      void qc.invalidateQueries({ queryKey: keys.summary });
      qc.setQueryData(keys.monitor(r.data.id), r.data);
      navigate(`/monitors/${r.data.id}`);
    },
  });
  const errors = { ...fieldErrors(save.error), ...localError };
  const general = save.error instanceof VigilApiError && Object.keys(errors).length === 0 ? save.error.message : null;
  const submit = (e: FormEvent) => { e.preventDefault(); save.mutate(); };
  return (
    <form onSubmit={submit} aria-labelledby="form-title">
      <h1 id="form-title">{existing ? `Edit ${existing.name}` : 'New monitor'}</h1>
      <section className="card">
        <Field label="Name" error={errors.name}>
          <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        {!existing && (
          <>
            <Field label="Kind" error={errors.kind}>
              <select value={kind} onChange={(e) => { setKind(e.target.value); setValues({}); }}>
                {KINDS.map((k) => <option key={k} value={k}>{KIND_LABELS[k]}</option>)}
              </select>
            </Field>
            <Field label="Workspace" error={errors.workspaceId}>
              <select value={workspaceId} onChange={(e) => setWorkspaceId(e.target.value)}>
                {workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
              </select>
            </Field>
          </>
        )}
        <Field label="Check every (seconds)" hint="Raised to your plan's shortest interval if lower." error={errors.intervalSeconds}>
          <input type="number" min={1} value={interval} onChange={(e) => setInterval(e.target.value)} />
        </Field>
        <Field label="Failed checks before down" hint="1 to 10." error={errors.confirmations}>
          <input type="number" min={1} max={10} value={confirmations} onChange={(e) => setConfirmations(e.target.value)} />
        </Field>
        <Field label="Tags" hint="Separated by commas." error={errors.tags}>
          <input value={tags} onChange={(e) => setTags(e.target.value)} />
        </Field>
      </section>
      <section className="card" aria-labelledby="check-title">
        <h2 id="check-title">{KIND_LABELS[kind]} check</h2>
        {existing && <p className="muted small">The check's settings are not shown again once saved. Leave them empty to keep them; fill them in to replace them all.</p>}
        {(KIND_FIELDS[kind as keyof typeof KIND_FIELDS] ?? []).map((f) => (
          <KindFieldInput key={`${kind}.${f.name}`} field={f} required={!existing && !!f.required} value={values[f.name]}
            error={errors[`config.${f.name}`]} onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))} />
        ))}
        {errors.config && <p role="alert" className="error">{errors.config}</p>}
      </section>
      {general && <p role="alert" className="error">{general}</p>}
      {Object.keys(errors).length > 0 && <p role="alert" className="error">Some fields need another look.</p>}
      <div className="row">
        <button type="submit" disabled={save.isPending}>{existing ? 'Save changes' : 'Create the monitor'}</button>
        <button type="button" className="secondary" onClick={() => navigate(-1)}>Cancel</button>
      </div>
    </form>
  );
}
