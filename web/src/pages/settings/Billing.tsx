import { useQuery } from '@tanstack/react-query';
import { q } from '../../lib/queries';
import { qa } from '../../lib/queries-account';
import { useMe } from '../../lib/me';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { Subscription } from './Subscription';
import { PlanUsage } from './PlanUsage';
import { Receipts } from './Receipts';
import { Checkout } from './Checkout';

/**
 * Billing: the plan and its subscription, usage against the plan's limits,
 * receipts, and a web checkout where this server offers one and the
 * subscription is not the App Store's (which only the store can change).
 */
export default function Billing() {
  const { can } = useMe();
  const billing = useQuery(qa.billing());
  // The usage counts come with /me: read it again on opening this page, so they are today's (one read).
  useQuery({ ...q.me(), staleTime: 0 });
  return (
    <>
      <h1>Billing</h1>
      {billing.isPending ? <Loading label="Loading billing" />
        : billing.isError ? <ErrorView error={billing.error} retry={() => void billing.refetch()} />
          : (
            <>
              <Subscription billing={billing.data} />
              <PlanUsage />
              {billing.data.canCheckoutOnWeb && can('billing:manage') && <Checkout current={billing.data.plan} />}
              <Receipts receipts={billing.data.receipts} />
            </>
          )}
    </>
  );
}
