import { useQuery } from '@tanstack/react-query';
import type { Schema } from '../lib/api';
import { q } from '../lib/queries';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { formatDateTime } from '../lib/format';

type Person = Schema<'OnCallPerson'>;
const who = (p: Person | null) => (p ? p.name ?? p.email : 'Nobody');

/** The rotation's next person after `current` (the schedule's order wraps round). */
function nextInRotation(s: Schema<'Schedule'>, current: Person | null): Person | null {
  if (!s.participants.length) return null;
  const i = current ? s.participants.findIndex((p) => p.userId === current.userId) : -1;
  return s.participants[(i + 1) % s.participants.length] ?? null;
}

/** Who is on call now and next for each schedule, the covers ahead, the escalation policies (read-only in part 1). */
export default function OnCall() {
  const data = useQuery(q.onCall());
  if (data.isPending) return <><h1>On-call</h1><Loading label="Loading on-call" /></>;
  if (data.isError) return <><h1>On-call</h1><ErrorView error={data.error} retry={() => void data.refetch()} /></>;
  const d = data.data;
  return (
    <>
      <h1>On-call</h1>
      {d.unreachable.length > 0 && (
        <div className="banner warn" role="alert">
          <span>No confirmed channel reaches {d.unreachable.map(who).join(', ')}: alerts to them would go nowhere.</span>
        </div>
      )}
      {d.schedules.length === 0 ? (
        <section className="card"><p>No on-call schedule yet. Create one with the API (<a href="/docs">API reference</a>, on-call) to rotate who gets paged.</p></section>
      ) : d.schedules.map((s) => {
        const now = d.onCallNow.find((n) => n.scheduleId === s.id);
        const next = now && !now.viaOverride ? nextInRotation(s, now.user) : null;
        const covers = d.overrides.filter((o) => o.scheduleId === s.id);
        return (
          <section key={s.id} className="card" aria-labelledby={`sch-${s.id}`}>
            <h2 id={`sch-${s.id}`}>{s.name}</h2>
            <dl className="facts">
              <dt>On call now</dt>
              <dd>{who(now?.user ?? null)}{now?.viaOverride ? ' (cover)' : ''}{now?.until ? <> until <time dateTime={now.until}>{formatDateTime(now.until)}</time></> : null}</dd>
              {next && <><dt>Next</dt><dd>{who(next)}</dd></>}
              <dt>Rotation</dt><dd>{s.participants.map(who).join(' → ')}; shifts of {s.shiftLengthHours} h, handoff at {s.handoffTime} ({s.timezone})</dd>
            </dl>
            {covers.length > 0 && (
              <>
                <h3>Covers</h3>
                <ul className="plain">
                  {covers.map((o) => <li key={o.id}>{who(o.user)}: <time dateTime={o.startsAt}>{formatDateTime(o.startsAt)}</time> – <time dateTime={o.endsAt}>{formatDateTime(o.endsAt)}</time></li>)}
                </ul>
              </>
            )}
          </section>
        );
      })}
      {d.escalationPolicies.length > 0 && (
        <section className="card" aria-labelledby="policies">
          <h2 id="policies">Escalation policies</h2>
          <ul className="plain">
            {d.escalationPolicies.map((p) => (
              <li key={p.id}>
                <strong>{p.name}</strong>: {p.steps.map((st) => `after ${st.afterMinutes} min, ${st.targetName ?? st.targetType}`).join('; ')}
                {p.repeat ? `; repeated ${p.repeat}×` : ''}
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
