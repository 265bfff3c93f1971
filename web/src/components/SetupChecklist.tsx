import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { keys, q } from '../lib/queries';
import { useMe } from '../lib/me';

/** The newcomer's first steps, shown until done or dismissed for the organisation. */
export function SetupChecklist() {
  const { can } = useMe();
  const qc = useQueryClient();
  const setup = useQuery(q.setup());
  const dismiss = useMutation({
    mutationFn: () => ok(api.DELETE('/setup')),
    // The answer is a bare acknowledgement: the checklist is marked dismissed here, without another read.
    onSuccess: () => qc.setQueryData<Schema<'Setup'>>(keys.setup, (old) => (old ? { ...old, dismissedAt: new Date().toISOString() } : old)),
  });
  const s = setup.data;
  if (!s || s.dismissedAt) return null;
  const steps = [
    { done: s.hasMonitor, text: <>{can('monitor:create') ? <Link to="/monitors/new">Create a monitor</Link> : 'Create a monitor'} for a site or service you run.</> },
    { done: s.hasConfirmedChannel, text: <>Add a notification channel (e-mail, Slack, webhook…) and confirm it, so alerts reach someone (<a href="/docs">API reference</a>, channels).</> },
    { done: s.hasStatusPage, text: <>Publish a status page for your users.</> },
    { done: s.hasColleague, text: <>Invite a colleague to share the on-call work.</> },
  ];
  if (steps.every((x) => x.done)) return null;
  return (
    <section className="card" aria-labelledby="setup-title">
      <div className="spread">
        <h2 id="setup-title">Get started</h2>
        {can('org:update') && <button type="button" className="secondary" onClick={() => dismiss.mutate()} disabled={dismiss.isPending}>Dismiss the checklist</button>}
      </div>
      <ul className="plain checklist">
        {steps.map((x, i) => (
          <li key={i}>
            <span aria-hidden="true">{x.done ? '✔' : '○'}</span>
            <span>{x.done ? <span className="visually-hidden">Done: </span> : <span className="visually-hidden">To do: </span>}{x.text}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
