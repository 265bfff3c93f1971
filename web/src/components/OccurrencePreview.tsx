import { useMemo } from 'react';
import { RecurrenceText } from './RecurrenceText';
import { formatDateTime } from '../lib/format';
import { preview, type Plan } from '../lib/maintenance';
import { browserZone } from '../lib/zones';

const COUNT = 5;

/** The rule in words and the next occurrences, before saving: in the person's time zone, and in the window's when it differs. */
export function OccurrencePreview({ plan, timezone }: { plan: Plan; timezone: string }) {
  const next = useMemo(() => preview(plan, timezone, COUNT), [plan, timezone]);
  const own = browserZone();
  const local = useMemo(() => {
    try {
      return new Intl.DateTimeFormat(undefined, { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit' });
    } catch {
      return null;
    }
  }, [timezone]);
  return (
    <section className="card" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <p>{plan.words ? <RecurrenceText rule={plan.words} timezone={timezone} /> : <>Once <span className="muted">({timezone})</span></>}</p>
      {plan.windows.length > 1 && <p className="small">Saved as {plan.windows.length} windows, one per weekday.</p>}
      {plan.firstOnly && (
        <p role="note" className="small warn-text">
          Vigil does not repeat this rule: it is kept as written, but alerts are silenced for the first occurrence only.
        </p>
      )}
      {plan.problem ? <p className="muted">{plan.problem}</p> : next.length === 0 ? (
        <p className="muted">No occurrence ahead: set an end after the start, in the future.</p>
      ) : (
        <>
          <h3>Next {next.length === 1 ? 'occurrence' : `${next.length} occurrences`}</h3>
          <ol className="occurrences">
            {next.map((o) => (
              <li key={o.startsAt.toISOString()}>
                <time dateTime={o.startsAt.toISOString()}>{formatDateTime(o.startsAt.toISOString())}</time>
                {' – '}
                <time dateTime={o.endsAt.toISOString()}>{formatDateTime(o.endsAt.toISOString())}</time>
                {timezone !== own && local && <span className="muted small"> ({local.format(o.startsAt)} – {local.format(o.endsAt)} {timezone})</span>}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
