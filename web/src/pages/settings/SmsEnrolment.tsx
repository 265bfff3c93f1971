import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError, type Schema } from '../../lib/api';
import { keys } from '../../lib/queries';
import { useMe } from '../../lib/me';
import { Field } from '../../components/Field';
import { FormError, fieldError } from '../../components/FormError';
import { SmsCodeForm } from './SmsCodeForm';

const CAVEATS: Record<NonNullable<Schema<'SmsEnrolment'>['caveat']>, string> = {
  'sender-replaced': 'Carriers there replace the sender name with a number, so the messages come from a number you may not recognise.',
  'registration-pending': 'That country requires a sender registration that is not complete yet: messages may be delayed or filtered.',
  unverified: 'Delivery to that country has not been proven yet: check that the code arrives.',
};

/**
 * The person's own phone for SMS alerts: the number gets a six-digit code
 * and receives nothing until the code is entered here. Enrolling again
 * replaces the earlier number and its pending code.
 */
export function SmsEnrolment() {
  const { me } = useMe();
  const qc = useQueryClient();
  const [phone, setPhone] = useState('');
  const [name, setName] = useState('');
  const [confirmed, setConfirmed] = useState<string | null>(null);
  const enrol = useMutation({
    mutationFn: () => ok(api.POST('/sms/enrolment', { body: { phone, ...(name.trim() ? { name: name.trim() } : {}) } })),
    onSuccess: () => setConfirmed(null),
  });
  const submit = (e: FormEvent) => { e.preventDefault(); enrol.mutate(); };
  const done = () => {
    setConfirmed(phone);
    enrol.reset();
    void qc.invalidateQueries({ queryKey: keys.channels });
  };
  const pending = enrol.data?.data ?? null;
  return (
    <section className="card" aria-labelledby="sms">
      <h2 id="sms">SMS alerts to my phone</h2>
      {!me.entitlements.smsIncluded ? (
        <p>Your organisation’s plan ({me.entitlements.plan}) does not include SMS alerts.</p>
      ) : pending ? (
        <>
          <p>
            A six-digit code is on its way to <strong>{phone}</strong> ({pending.country}). The number receives nothing until the code is entered;
            the code lasts 10 minutes.
          </p>
          {pending.caveat && <p className="notice">{CAVEATS[pending.caveat]}</p>}
          <SmsCodeForm onConfirmed={done} onRestart={() => enrol.reset()} />
        </>
      ) : (
        <form className="fields-narrow" onSubmit={submit}>
          <p className="muted">
            Incidents can reach you by SMS once your number is confirmed. Enrolling a number replaces the one enrolled before.
          </p>
          <Field label="Phone number" hint="In international form, e.g. +44 7700 900123." error={fieldError(enrol.error, 'phone')}>
            <input type="tel" required autoComplete="tel" maxLength={32} value={phone} onChange={(e) => setPhone(e.target.value)} />
          </Field>
          <Field label="Channel name (optional)" hint="Default: SMS and the number's last four digits." error={fieldError(enrol.error, 'name')}>
            <input maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
          </Field>
          <FormError error={enrol.error} fields={['phone', 'name']} />
          {enrol.error instanceof VigilApiError && enrol.error.code === 'sms_unavailable' && (
            <p className="muted small">Nothing was sent or stored. Once the server has an SMS provider, enrol again here.</p>
          )}
          <button type="submit" disabled={enrol.isPending}>Send the code</button>
          {confirmed && <p role="status" className="notice">{confirmed} is confirmed: incidents now reach it by SMS.</p>}
        </form>
      )}
    </section>
  );
}
