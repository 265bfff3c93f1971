import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../../lib/api';
import { useMe } from '../../lib/me';
import { Field } from '../../components/Field';
import { FormError } from '../../components/FormError';

/**
 * Deletes the person's own account: their memberships, personal channels and
 * API keys; an organisation where they are the only member goes with it.
 * The server refuses while they are the only owner of an organisation with
 * other members (`sole_owner`) or while an organisation that would go still
 * has a paid subscription running (`subscription_active`). Typing the
 * address first keeps a stray click from deleting anything.
 */
export function DeleteAccount() {
  const { me, can } = useMe();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [typed, setTyped] = useState('');
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/account')),
    onSuccess: () => { qc.clear(); navigate('/sign-in', { replace: true }); },
  });
  const e = remove.error instanceof VigilApiError ? remove.error : null;
  const matches = typed.trim().toLowerCase() === me.user.email.toLowerCase();
  const submit = (ev: FormEvent) => { ev.preventDefault(); if (matches) remove.mutate(); };
  return (
    <section className="card" aria-labelledby="delete-account">
      <h2 id="delete-account">Delete my account</h2>
      <p>
        This deletes your account and your memberships, with your personal channels (such as your SMS number) and your API keys. Shared channels you created stay
        with your team. An organisation where you are the only member is deleted with everything in it. This cannot be undone.
      </p>
      <p className="muted small">
        It is refused while you are the only owner of an organisation that has other members (make one of them an owner first), and while an
        organisation that would be deleted still has a paid subscription running (cancel it first).
      </p>
      <form className="fields-narrow" onSubmit={submit}>
        <Field label="Type your e-mail address to confirm">
          <input autoComplete="off" value={typed} onChange={(ev) => setTyped(ev.target.value)} />
        </Field>
        <FormError error={remove.error} />
        {e?.code === 'subscription_active' && (
          e.vars.source === 'app_store'
            ? <p className="small">Cancel it in the App Store: on the device, Settings › your name › Subscriptions.</p>
            : can('billing:read') ? <p className="small">See the subscription in <Link to="/settings/billing">Billing</Link>.</p> : null
        )}
        <button type="submit" className="danger" disabled={!matches || remove.isPending}>Delete my account</button>
      </form>
    </section>
  );
}
