import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { Field } from './Field';
import { CopyButton } from './CopyButton';
import { FormError, reasonAt } from './FormError';

/** The command that runs a probe with `token` against this server (README, "Scale-out and private probes"). */
export const probeRunCommand = (token: string) => `npm run probe -- --server ${window.location.origin} --token ${token}`;

/**
 * Adds a private probe (`POST /probes`): a name, then its token shown this
 * once — the server keeps only a hash — with the command that runs the probe
 * with it. Offered to callers with `agent:enroll` not confined to workspaces.
 */
export function ProbeForm() {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => ok(api.POST('/probes', { body: { name } })).then((r) => r.data),
    onSuccess: () => { setName(''); void qc.invalidateQueries({ queryKey: keys.probes }); },
  });
  const submit = (ev: FormEvent) => { ev.preventDefault(); create.mutate(); };
  if (create.data) return <NewProbeToken created={create.data} onDone={() => create.reset()} />;
  return (
    <form onSubmit={submit} aria-label="New probe">
      <Field label="Probe name" hint="Where it runs, e.g. “office network” or “eu-factory-1”." error={reasonAt(create.error, 'name')}>
        <input required maxLength={100} value={name} onChange={(x) => setName(x.target.value)} />
      </Field>
      <FormError error={create.error} fields={['name']} />
      <button type="submit" disabled={create.isPending}>Add the probe</button>
    </form>
  );
}

/** A new probe's token, shown this once with copy buttons, and how to run the probe with it. */
function NewProbeToken({ created, onDone }: { created: Schema<'CreatedProbe'>; onDone: () => void }) {
  const id = useId();
  const command = probeRunCommand(created.token);
  return (
    <div role="status" className="notice">
      <p><strong>Probe “{created.name}” added.</strong> Copy its token now: <strong>it will not be shown again</strong> (Vigil keeps only a hash of it). A lost token cannot be recovered: revoke the probe and add another.</p>
      <div className="field">
        <label htmlFor={`${id}-token`}>Token of “{created.name}”</label>
        <div className="row">
          <input id={`${id}-token`} readOnly size={created.token.length + 8} value={created.token} onFocus={(x) => x.target.select()} />
          <CopyButton text={created.token} label="Copy the token" />
        </div>
      </div>
      <p className="small">Run it on a machine that reaches the services to check; it only needs to reach this server. It shows as seen here once it connects.</p>
      {/* Wrapped, not scrolled: the whole command is seen at phone width, and the copy is exact. */}
      <pre className="code wrap">{command}</pre>
      <div className="row">
        <CopyButton text={command} label="Copy the command" />
        <button type="button" className="secondary" onClick={onDone}>I have saved the token</button>
      </div>
    </div>
  );
}
