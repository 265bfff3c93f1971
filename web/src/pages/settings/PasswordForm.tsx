import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../../lib/api';
import { accountKeys } from '../../lib/queries-account';
import { Field } from '../../components/Field';
import { FormError, fieldError } from '../../components/FormError';

/** Changes the password; the server then ends the person's other sessions (this one stays). */
export function PasswordForm() {
  const qc = useQueryClient();
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNew] = useState('');
  const change = useMutation({
    mutationFn: () => ok(api.PUT('/me/password', { body: { currentPassword, newPassword } })),
    onSuccess: () => { setCurrent(''); setNew(''); void qc.invalidateQueries({ queryKey: accountKeys.sessions }); },
  });
  const submit = (e: FormEvent) => { e.preventDefault(); change.mutate(); };
  const ended = change.data?.data.otherSessionsEnded ?? 0;
  return (
    <section className="card" aria-labelledby="password">
      <h2 id="password">Password</h2>
      <form className="fields-narrow" onSubmit={submit}>
        <Field label="Current password" error={fieldError(change.error, 'currentPassword')}>
          <input type="password" required autoComplete="current-password" maxLength={1024} value={currentPassword} onChange={(e) => setCurrent(e.target.value)} />
        </Field>
        <Field label="New password" hint="8 to 128 characters. Your other sessions are signed out." error={fieldError(change.error, 'newPassword')}>
          <input type="password" required autoComplete="new-password" minLength={8} maxLength={128} value={newPassword} onChange={(e) => setNew(e.target.value)} />
        </Field>
        <FormError error={change.error} fields={['currentPassword', 'newPassword']} />
        <button type="submit" disabled={change.isPending}>Change the password</button>
        {change.isSuccess && (
          <p role="status" className="notice">
            Password changed.{ended > 0 ? ` ${ended} other ${ended === 1 ? 'session was' : 'sessions were'} signed out.` : ''}
          </p>
        )}
      </form>
    </section>
  );
}
