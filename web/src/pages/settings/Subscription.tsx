import type { Schema } from '../../lib/api';
import { formatDateTime } from '../../lib/format';

const STATUS: Record<Schema<'Billing'>['status'], [string, string]> = {
  active: ['Active', 'up'], trialing: ['Trial', 'up'], past_due: ['Payment overdue', 'down'], canceled: ['Cancelled', 'paused'], none: ['No subscription', 'paused'],
};
const SOURCE: Record<Schema<'Billing'>['source'], string> = {
  web_processor: 'Bought on the web (Stripe)', app_store: 'Bought in the App Store', manual: 'Arranged with the operator', none: 'Nothing bought',
};
const title = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);

/** The plan, the subscription's state and where it comes from; where it can be changed when not here. */
export function Subscription({ billing: b }: { billing: Schema<'Billing'> }) {
  const [status, tone] = STATUS[b.status];
  return (
    <section className="card" aria-labelledby="plan">
      <h2 id="plan">Plan</h2>
      <dl className="facts">
        <dt>Plan</dt><dd><strong>{title(b.plan)}</strong>{b.cadence ? `, billed ${b.cadence}` : ''}</dd>
        <dt>Status</dt><dd><span className={`status ${tone}`}>{status}</span></dd>
        {b.currentPeriodEnd && <><dt>{b.status === 'trialing' ? 'Trial ends' : 'Current period ends'}</dt><dd>{formatDateTime(b.currentPeriodEnd)}</dd></>}
        {b.cancelAt && <><dt>Ends on</dt><dd>{formatDateTime(b.cancelAt)} (cancelled)</dd></>}
        <dt>Add-on packs</dt><dd>{b.addOnPacks}</dd>
        <dt>Source</dt><dd>{SOURCE[b.source]}</dd>
      </dl>
      {b.source === 'app_store' && (
        <p className="notice">
          This subscription was bought in the App Store, so only the store can change or cancel it: on the iPhone or iPad that bought it,
          open Settings › your name › Subscriptions.
        </p>
      )}
      {b.status === 'past_due' && <p className="notice">The last payment failed: update the payment method where the subscription was bought.</p>}
      {!b.canCheckoutOnWeb && b.source !== 'app_store' && (
        <p className="muted small">This server does not sell plans on the web; ask its operator to change the plan.</p>
      )}
    </section>
  );
}
