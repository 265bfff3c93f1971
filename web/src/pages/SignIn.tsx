import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../lib/api';
import { q } from '../lib/queries';
import { Field } from '../components/Field';

/** Where to go after signing in: a path of this app only, never another site. */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export function SignIn() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation({
    mutationFn: () => ok(api.POST('/sessions', { body: { email, password } })),
    onSuccess: async () => {
      qc.clear();
      await qc.fetchQuery(q.me());
      navigate(safeNext(params.get('next')), { replace: true });
    },
  });
  const e = signIn.error instanceof VigilApiError ? signIn.error : null;
  const message = !signIn.error ? null
    : e?.code === 'sign_in_failed' ? 'The e-mail address or the password is not right.'
      : e?.status === 429 ? `Too many attempts. Try again in ${e.retryAfterSeconds ?? 60} seconds.`
        : e?.message ?? 'Signing in failed.';
  const submit = (ev: FormEvent) => { ev.preventDefault(); signIn.mutate(); };
  return (
    <main className="narrow">
      <section className="card">
        <h1>Sign in to Vigil</h1>
        {params.get('reset') === 'done' && <p role="status">Your password is set. Sign in with it.</p>}
        <form onSubmit={submit} noValidate={false}>
          <Field label="E-mail address">
            <input type="email" autoComplete="username" autoFocus required value={email} onChange={(x) => setEmail(x.target.value)} />
          </Field>
          <Field label="Password">
            <input type="password" autoComplete="current-password" required value={password} onChange={(x) => setPassword(x.target.value)} />
          </Field>
          {message && <p role="alert" className="error">{message}</p>}
          <div className="spread">
            <button type="submit" disabled={signIn.isPending}>Sign in</button>
            <Link to="/forgot-password">Forgot your password?</Link>
          </div>
        </form>
      </section>
    </main>
  );
}
