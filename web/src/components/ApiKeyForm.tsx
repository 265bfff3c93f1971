import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { q } from '../lib/queries';
import { settingsKeys } from '../lib/queries-settings';
import { useMe } from '../lib/me';
import { Field } from './Field';
import { CopyButton } from './CopyButton';

type Scope = NonNullable<Schema<'CreateApiKeyBody'>['scopes']>[number];

/** Expiry choices, in days (the server takes 1 to 3650); '' never expires. */
const EXPIRIES: Array<[string, string]> = [['', 'Never'], ['7', 'In 7 days'], ['30', 'In 30 days'], ['90', 'In 90 days'], ['365', 'In a year']];

/** The first reason the server gave for `field` or one of its items (`scopes.2`). */
function reasonFor(e: VigilApiError | null, field: string): string | null {
  const d = e?.details;
  if (!d) return null;
  const hit = d.fields.find((f) => f.field === field || f.field.startsWith(`${field}.`));
  return hit?.reason ?? (d.field === field || d.field.startsWith(`${field}.`) ? d.reason : null);
}

/**
 * Creates a key: a name, optionally narrowed to some of the caller's own
 * permissions and confined to some of its workspaces, optionally expiring.
 * The token is shown here once; the server keeps only its hash.
 */
export function ApiKeyForm() {
  const qc = useQueryClient();
  const { me } = useMe();
  const workspaces = useQuery(q.workspaces());
  const [name, setName] = useState('');
  const [narrow, setNarrow] = useState(false);
  const [scopes, setScopes] = useState<Set<string>>(new Set());
  const [confine, setConfine] = useState(false);
  const [wsIds, setWsIds] = useState<Set<string>>(new Set());
  const [expires, setExpires] = useState('');
  const create = useMutation({
    mutationFn: () => ok(api.POST('/api-keys', { body: {
      name,
      scopes: narrow ? ([...scopes] as Scope[]) : [],
      workspaceIds: confine ? [...wsIds] : [],
      expiresInDays: expires ? Number(expires) : null,
    } })).then((r) => r.data),
    onSuccess: () => {
      setName(''); setNarrow(false); setScopes(new Set()); setConfine(false); setWsIds(new Set()); setExpires('');
      void qc.invalidateQueries({ queryKey: settingsKeys.apiKeys });
      void qc.invalidateQueries({ queryKey: settingsKeys.audit });
    },
  });
  const e = create.error instanceof VigilApiError ? create.error : null;
  const toggle = (set: Set<string>, v: string, on: boolean) => { const n = new Set(set); if (on) n.add(v); else n.delete(v); return n; };
  const submit = (ev: FormEvent) => { ev.preventDefault(); create.mutate(); };
  const scopeError = reasonFor(e, 'scopes') ?? (e?.status === 403 && e.vars.permission ? e.message : null);
  const wsError = reasonFor(e, 'workspaceIds');
  return (
    <section className="card" aria-labelledby="new-key">
      <h3 id="new-key">Create a key</h3>
      {create.data ? <NewToken created={create.data} onDone={() => create.reset()} /> : (
        <form onSubmit={submit}>
          <Field label="Key name" hint="Say what uses it, e.g. “Terraform” or “status script”." error={reasonFor(e, 'name')}>
            <input required maxLength={100} value={name} onChange={(x) => setName(x.target.value)} />
          </Field>
          <fieldset aria-describedby={scopeError ? 'key-scopes-error' : undefined}>
            <legend>Permissions</legend>
            <label className="check"><input type="radio" name="scope-mode" checked={!narrow} onChange={() => setNarrow(false)} /> Everything my role allows (it follows my role as it changes)</label>
            <label className="check"><input type="radio" name="scope-mode" checked={narrow} onChange={() => setNarrow(true)} /> Only the permissions I tick</label>
            {narrow && (
              <div className="choices">
                {me.membership.permissions.map((p) => (
                  <label key={p} className="check"><input type="checkbox" checked={scopes.has(p)} onChange={(x) => setScopes(toggle(scopes, p, x.target.checked))} /> {p}</label>
                ))}
              </div>
            )}
            {scopeError && <p id="key-scopes-error" className="error small">{scopeError}</p>}
          </fieldset>
          <fieldset aria-describedby={wsError ? 'key-ws-error' : undefined}>
            <legend>Workspaces</legend>
            <label className="check"><input type="radio" name="ws-mode" checked={!confine} onChange={() => setConfine(false)} /> {me.membership.workspaceIds ? 'All the workspaces I am confined to' : 'The whole organisation'}</label>
            <label className="check"><input type="radio" name="ws-mode" checked={confine} onChange={() => setConfine(true)} /> Only the workspaces I tick</label>
            {confine && (
              <div className="choices">
                {(workspaces.data ?? []).map((w) => (
                  <label key={w.id} className="check"><input type="checkbox" checked={wsIds.has(w.id)} onChange={(x) => setWsIds(toggle(wsIds, w.id, x.target.checked))} /> {w.name}</label>
                ))}
              </div>
            )}
            {wsError && <p id="key-ws-error" className="error small">{wsError}</p>}
          </fieldset>
          <Field label="Expires" error={reasonFor(e, 'expiresInDays')}>
            <select value={expires} onChange={(x) => setExpires(x.target.value)}>
              {EXPIRIES.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
            </select>
          </Field>
          {e && !scopeError && !wsError && !reasonFor(e, 'name') && !reasonFor(e, 'expiresInDays') && <p role="alert" className="error">{e.message}</p>}
          <button type="submit" disabled={create.isPending}>Create the key</button>
        </form>
      )}
    </section>
  );
}

/** The token of a key just made: shown this once, with a copy button. */
function NewToken({ created, onDone }: { created: Schema<'CreatedApiKey'>; onDone: () => void }) {
  return (
    <div role="status" className="notice">
      <p><strong>Key “{created.name}” created.</strong> Copy its token now: <strong>it will not be shown again</strong> (Vigil keeps only a hash of it). A lost token cannot be recovered; create another key instead.</p>
      <div className="field">
        <label htmlFor="new-token">Token of “{created.name}”</label>
        <div className="row">
          <input id="new-token" readOnly size={48} value={created.token} onFocus={(x) => x.target.select()} />
          <CopyButton text={created.token} label="Copy the token" />
        </div>
        <span className="hint">Send it as <code>Authorization: Bearer …</code>.</span>
      </div>
      <button type="button" className="secondary" onClick={onDone}>I have saved the token</button>
    </div>
  );
}
