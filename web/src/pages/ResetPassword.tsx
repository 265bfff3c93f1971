import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../lib/api';
import { q } from '../lib/queries';
import { Field } from '../components/Field';

/**
 * Sets a new password with a reset link's token, carried in the address's
 * fragment (`/reset-password#token=pr_…`) so it never reaches a server log,
 * and lands signed in (`signIn: true`: the answer sets the session cookie).
 */
export function ResetPassword() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
  const [password, setPassword] = useState('');
  const reset = useMutation({
    mutationFn: () => ok(api.POST('/password-reset/confirm', { body: { token, password, signIn: true } })),
    onSuccess: async (r) => {
      if (!r.data.signedIn) { navigate('/sign-in?reset=done', { replace: true }); return; }
      qc.clear();
      await qc.fetchQuery(q.me());
      navigate('/', { replace: true });
    },
  });
  const e = reset.error instanceof VigilApiError ? reset.error : null;
  const submit = (ev: FormEvent) => { ev.preventDefault(); reset.mutate(); };
  return (
    <main className="narrow">
      <section className="card">
        <h1>Set a new password</h1>
        {!token ? (
          <p>This page needs the link from the reset e-mail. <Link to="/forgot-password">Ask for a new link</Link>.</p>
        ) : (
          <form onSubmit={submit}>
            <Field label="New password" hint="8 to 128 characters." error={e?.fieldReason('password') ?? null}>
              <input type="password" autoComplete="new-password" required minLength={8} maxLength={128} value={password} onChange={(x) => setPassword(x.target.value)} />
            </Field>
            {e && !e.fieldReason('password') && (
              <p role="alert" className="error">
                {e.code === 'reset_link_invalid' ? 'This link was used, replaced or has expired. Ask for a new one.' : e.message}
              </p>
            )}
            <button type="submit" disabled={reset.isPending}>Set the password</button>
          </form>
        )}
      </section>
    </main>
  );
}
