import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { Field } from './Field';
import { FormError } from './FormError';

type Host = Schema<'Host'>;
type Values = Record<'name' | 'address' | 'provider' | 'notes', string>;
const FIELDS = ['name', 'address', 'provider', 'notes'] as const;

/**
 * Adds a host, or changes one (`host` given). An edit sends only what
 * changed (an empty change is refused by the server); a free-text field
 * left empty is cleared (null).
 */
export function HostForm({ host, onDone }: { host?: Host; onDone?: () => void }) {
  const qc = useQueryClient();
  const initial: Values = { name: host?.name ?? '', address: host?.address ?? '', provider: host?.provider ?? '', notes: host?.notes ?? '' };
  const [v, setV] = useState<Values>(initial);
  const set = (k: keyof Values) => (x: { target: { value: string } }) => setV((o) => ({ ...o, [k]: x.target.value }));
  const save = useMutation({
    mutationFn: async () => {
      const free = (s: string) => (s.trim() === '' ? null : s.trim());
      if (!host) return (await ok(api.POST('/hosts', { body: { name: v.name.trim(), address: free(v.address), provider: free(v.provider), notes: free(v.notes) } }))).data;
      const body: Schema<'UpdateHostBody'> = {};
      if (v.name.trim() !== host.name) body.name = v.name.trim();
      for (const k of ['address', 'provider', 'notes'] as const) if (free(v[k]) !== host[k]) body[k] = free(v[k]);
      if (Object.keys(body).length) await ok(api.PATCH('/hosts/{id}', { params: { path: { id: host.id } }, body }));
      return null;
    },
    onSuccess: () => {
      // Every host read (the list and each host's page) starts with keys.hosts.
      void qc.invalidateQueries({ queryKey: keys.hosts });
      if (!host) setV(initial);
      onDone?.();
    },
  });
  const e = save.error instanceof VigilApiError ? save.error : null;
  const submit = (ev: FormEvent) => { ev.preventDefault(); save.mutate(); };
  const created = !host ? save.data : null;
  return (
    <form onSubmit={submit}>
      <Field label="Host name" hint="Unique in the organisation, e.g. db-1.internal." error={e?.fieldReason('name') ?? null}>
        <input required maxLength={200} value={v.name} onChange={set('name')} />
      </Field>
      <Field label="Address" hint="Optional: an IP address or DNS name, for your reference." error={e?.fieldReason('address') ?? null}>
        <input maxLength={500} value={v.address} onChange={set('address')} />
      </Field>
      <Field label="Provider" hint="Optional: where it runs (a cloud, a data centre, a rack)." error={e?.fieldReason('provider') ?? null}>
        <input maxLength={200} value={v.provider} onChange={set('provider')} />
      </Field>
      <Field label="Notes" hint="Optional." error={e?.fieldReason('notes') ?? null}>
        <textarea maxLength={10000} value={v.notes} onChange={set('notes')} />
      </Field>
      <FormError error={save.error} fields={[...FIELDS]} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>{host ? 'Save the host' : 'Add the host'}</button>
        {host && onDone && <button type="button" className="secondary" onClick={onDone}>Cancel</button>}
      </div>
      {created && (
        <p role="status" className="notice">Host <Link to={`/hosts/${created.id}`}>{created.name}</Link> added. Open it to attach the monitors that run on it.</p>
      )}
    </form>
  );
}
