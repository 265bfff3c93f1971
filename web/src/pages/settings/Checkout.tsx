import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../lib/api';
import { Field } from '../../components/Field';
import { FormError, fieldError } from '../../components/FormError';

type Body = Schema<'CreateCheckoutSessionBody'>;

/**
 * Buying or changing the plan on the web: the server makes a Stripe
 * Checkout Session and the browser goes there. Nothing changes here until
 * Stripe reports the subscription back to Vigil.
 */
export function Checkout({ current }: { current: string }) {
  const [plan, setPlan] = useState<Body['plan']>(current === 'business' ? 'business' : 'pro');
  const [cadence, setCadence] = useState<Body['cadence']>('monthly');
  const [packs, setPacks] = useState('0');
  const checkout = useMutation({
    mutationFn: () => ok(api.POST('/billing/checkout', { body: { plan, cadence, addOnPacks: Number(packs) || 0 } })),
    onSuccess: (r) => window.location.assign(r.data.url),
  });
  const submit = (e: FormEvent) => { e.preventDefault(); checkout.mutate(); };
  const url = checkout.data?.data.url;
  return (
    <section className="card" aria-labelledby="checkout">
      <h2 id="checkout">Change the plan</h2>
      <form onSubmit={submit}>
        <div className="row top">
          <Field label="Plan" error={fieldError(checkout.error, 'plan')}>
            <select value={plan} onChange={(e) => setPlan(e.target.value as Body['plan'])}>
              <option value="pro">Pro</option>
              <option value="business">Business</option>
            </select>
          </Field>
          <Field label="Billed" error={fieldError(checkout.error, 'cadence')}>
            <select value={cadence} onChange={(e) => setCadence(e.target.value as Body['cadence'])}>
              <option value="monthly">Monthly</option>
              <option value="yearly">Yearly</option>
            </select>
          </Field>
          <Field label="Add-on packs" hint="Each adds 50 monitors, 5 members and 2 status pages." error={fieldError(checkout.error, 'addOnPacks')}>
            <input type="number" className="short" min={0} max={50} step={1} required value={packs} onChange={(e) => setPacks(e.target.value)} />
          </Field>
        </div>
        <FormError error={checkout.error} fields={['plan', 'cadence', 'addOnPacks']} />
        <button type="submit" disabled={checkout.isPending || !!url}>Continue to payment</button>
        <p className="muted small">Payment is taken by Stripe; the plan changes here once Stripe confirms it.</p>
        {url && <p role="status" className="notice">Taking you to Stripe… If nothing happens, <a href={url}>open the checkout</a>.</p>}
      </form>
    </section>
  );
}
