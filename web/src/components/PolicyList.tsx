import { Link } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { DeleteButton } from './DeleteButton';

const TARGET: Record<string, string> = { schedule: "the on-call person of", user: '', channel: 'the channel' };

/** One step in words: "after 5 min, the on-call person of Primary". */
function stepText(st: Schema<'EscalationStep'>): string {
  const name = st.targetName ?? `a ${st.targetType === 'user' ? 'person' : st.targetType} that is gone`;
  return `after ${st.afterMinutes} min, ${[TARGET[st.targetType], name].filter(Boolean).join(' ')}`;
}

/** The escalation policies, with edit and delete for those who may; an empty state that says what a policy is for. */
export function PolicyList({ policies, monitors, manage }: {
  policies: Schema<'EscalationPolicy'>[]; monitors: Map<string, string>; manage: boolean;
}) {
  return (
    <section className="card" aria-labelledby="policies">
      <div className="spread">
        <h2 id="policies">Escalation policies</h2>
        {manage && <Link className="button secondary" to="/on-call/policies/new">New escalation policy</Link>}
      </div>
      {policies.length === 0 ? (
        <p>No escalation policy yet. A policy notifies the on-call person, a person or a channel, step by step, while an incident stays unacknowledged.</p>
      ) : (
        <ul className="plain">
          {policies.map((p) => (
            <li key={p.id}>
              <div className="spread">
                <span>
                  <strong>{p.name}</strong>: {p.steps.map(stepText).join('; ')}{p.repeat ? `; repeated ${p.repeat}×` : ''}
                  <br /><span className="muted small">
                    {p.monitorIds.length ? `For ${p.monitorIds.map((id) => monitors.get(id) ?? id).join(', ')}` : 'For no monitor yet'}
                  </span>
                </span>
                {manage && (
                  <span className="row small">
                    <Link className="button secondary" to={`/on-call/policies/${p.id}/edit`} aria-label={`Edit ${p.name}`}>Edit</Link>
                    <DeleteButton label={`Delete ${p.name}`} invalidate={keys.onCall}
                      question={`Delete the escalation policy “${p.name}”? Escalations of it that are running stop.`}
                      run={() => ok(api.DELETE('/on-call/escalation-policies/{id}', { params: { path: { id: p.id } } }))} />
                  </span>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
