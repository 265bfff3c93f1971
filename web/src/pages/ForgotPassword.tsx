import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../lib/api';
import { Field } from '../components/Field';

/** Asks for a reset link by e-mail; the answer is the same whether or not the address has an account. */
export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const ask = useMutation({ mutationFn: () => ok(api.POST('/password-reset', { body: { email } })) });
  const submit = (ev: FormEvent) => { ev.preventDefault(); ask.mutate(); };
  const e = ask.error instanceof VigilApiError ? ask.error : null;
  return (
    <main className="narrow">
      <section className="card">
        <h1>Forgot your password?</h1>
        {ask.isSuccess ? (
          <p role="status">If {email} has a Vigil account, a link to set a new password is on its way. It works once, for one hour.</p>
        ) : (
          <form onSubmit={submit}>
            <p className="muted">We e-mail you a link to set a new password.</p>
            <Field label="E-mail address" error={e?.fieldReason('email') ?? null}>
              <input type="email" autoComplete="username" required value={email} onChange={(x) => setEmail(x.target.value)} />
            </Field>
            {e && !e.fieldReason('email') && <p role="alert" className="error">{e.status === 429 ? `Too many requests. Try again in ${e.retryAfterSeconds ?? 60} seconds.` : e.message}</p>}
            <button type="submit" disabled={ask.isPending}>Send the link</button>
          </form>
        )}
        <p><Link to="/sign-in">Back to sign-in</Link></p>
      </section>
    </main>
  );
}
