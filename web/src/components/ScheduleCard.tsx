import { useState } from 'react';
import { Link } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { formatDateTime } from '../lib/format';
import { who, type OnCallData, type Person } from '../lib/oncall';
import { CoverForm } from './CoverForm';
import { DeleteButton } from './DeleteButton';

type Schedule = Schema<'Schedule'>;

/** The rotation's next person after `current` (the schedule's order wraps round). */
function nextInRotation(s: Schedule, current: Person | null): Person | null {
  if (!s.participants.length) return null;
  const i = current ? s.participants.findIndex((p) => p.userId === current.userId) : -1;
  return s.participants[(i + 1) % s.participants.length] ?? null;
}

/**
 * One schedule: who is on call now and next, the rotation, the covers ahead;
 * for those who may (`manage`), edit, delete, add and remove covers.
 */
export function ScheduleCard({ schedule: s, data, people, manage }: {
  schedule: Schedule; data: OnCallData; people: Person[]; manage: boolean;
}) {
  const [covering, setCovering] = useState(false);
  const now = data.onCallNow.find((n) => n.scheduleId === s.id);
  const next = now && !now.viaOverride ? nextInRotation(s, now.user) : null;
  const covers = data.overrides.filter((o) => o.scheduleId === s.id);
  const paging = data.escalationPolicies.filter((p) => p.steps.some((st) => st.targetType === 'schedule' && st.targetId === s.id));
  return (
    <section className="card" aria-labelledby={`sch-${s.id}`}>
      <div className="spread">
        <h2 id={`sch-${s.id}`}>{s.name}</h2>
        {manage && (
          <span className="row small">
            <Link className="button secondary" to={`/on-call/schedules/${s.id}/edit`} aria-label={`Edit ${s.name}`}>Edit</Link>
            <DeleteButton label={`Delete ${s.name}`} invalidate={keys.onCall}
              question={`Delete the schedule “${s.name}” and its covers?${paging.length ? ` Escalation steps paging it (${paging.map((p) => p.name).join(', ')}) will page nobody.` : ''}`}
              run={() => ok(api.DELETE('/on-call/schedules/{id}', { params: { path: { id: s.id } } }))} />
          </span>
        )}
      </div>
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
            {covers.map((o) => (
              <li key={o.id} className="spread">
                <span>{who(o.user)}: <time dateTime={o.startsAt}>{formatDateTime(o.startsAt)}</time> – <time dateTime={o.endsAt}>{formatDateTime(o.endsAt)}</time></span>
                {manage && (
                  <span className="row small">
                    <DeleteButton label={`Remove the cover by ${who(o.user)} from ${formatDateTime(o.startsAt)}`} text="Remove" invalidate={keys.onCall}
                      question={`Remove the cover by ${who(o.user)}? The rotation applies again.`}
                      run={() => ok(api.DELETE('/on-call/overrides/{id}', { params: { path: { id: o.id } } }))} />
                  </span>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {manage && (covering
        ? <CoverForm schedule={s} people={people} onDone={() => setCovering(false)} />
        : <p><button type="button" className="secondary" onClick={() => setCovering(true)} aria-label={`Add a cover for ${s.name}`}>Add a cover</button></p>)}
    </section>
  );
}
