import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../../lib/api';
import { Field } from '../../components/Field';
import { FormError, fieldError } from '../../components/FormError';

/**
 * The six-digit code of a pending enrolment. After five wrong codes the
 * server voids it (and says so): the number must be enrolled again, as
 * when another number is wanted (`onRestart`).
 */
export function SmsCodeForm({ onConfirmed, onRestart }: { onConfirmed: () => void; onRestart: () => void }) {
  const [code, setCode] = useState('');
  const confirm = useMutation({
    mutationFn: () => ok(api.POST('/sms/enrolment/confirm', { body: { code: code.trim() } })),
    onSuccess: onConfirmed,
  });
  const e = confirm.error instanceof VigilApiError ? confirm.error : null;
  // Void: the last wrong code, or no pending enrolment any more (expired or replaced).
  const gone = e && ((e.code === 'verification_code_incorrect' && e.vars.triesLeft === '0') || e.status === 404);
  const submit = (ev: FormEvent) => { ev.preventDefault(); confirm.mutate(); };
  return (
    <form className="fields-narrow" onSubmit={submit}>
      <Field label="Six-digit code" error={fieldError(confirm.error, 'code')}>
        <input required inputMode="numeric" autoComplete="one-time-code" pattern="\s*[0-9]{6}\s*" maxLength={32} size={8} className="code"
          value={code} onChange={(ev) => setCode(ev.target.value)} />
      </Field>
      <FormError error={confirm.error} fields={['code']} />
      <div className="row">
        {gone ? <button type="button" onClick={onRestart}>Enrol the number again</button>
          : <button type="submit" disabled={confirm.isPending}>Confirm the number</button>}
        <button type="button" className="link" onClick={onRestart}>Use another number</button>
      </div>
    </form>
  );
}
