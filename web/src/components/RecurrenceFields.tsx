import { useId } from 'react';
import { Field } from './Field';
import { WEEKDAYS, WEEKDAY_NAMES, type Repeat, type Schedule } from '../lib/maintenance';

const UNIT: Record<string, string> = { daily: 'days', weekly: 'weeks', monthly: 'months' };

/** How a window repeats: never, daily, weekly on chosen days, monthly, or a rule written by hand. */
export function RecurrenceFields({ schedule: s, set, error, startDay }: {
  schedule: Schedule; set: (patch: Partial<Schedule>) => void; error?: string | null; startDay: string | null;
}) {
  const id = useId();
  const days = s.days.length ? s.days : startDay ? [startDay] : [];
  const toggleDay = (d: string, on: boolean) => set({ days: on ? [...days, d] : days.filter((x) => x !== d) });
  return (
    <>
      <Field label="Repeats" error={s.repeat === 'custom' ? null : error}>
        <select value={s.repeat} onChange={(e) => set({ repeat: e.target.value as Repeat })}>
          <option value="none">Never (once)</option>
          <option value="daily">Daily</option>
          <option value="weekly">Weekly</option>
          <option value="monthly">Monthly, on the start's day of the month</option>
          <option value="custom">Custom rule (RRULE)</option>
        </select>
      </Field>
      {s.repeat === 'custom' && (
        <Field label="Rule" hint="An RRULE such as FREQ=WEEKLY;INTERVAL=2;BYDAY=MO. Vigil repeats DAILY, WEEKLY and MONTHLY rules with INTERVAL, COUNT or UNTIL, and a BYDAY or BYMONTHDAY naming the start's own day; any other rule is kept but covers the first occurrence only." error={error}>
          <input value={s.custom} maxLength={500} spellCheck={false} autoComplete="off" onChange={(e) => set({ custom: e.target.value })} />
        </Field>
      )}
      {(s.repeat === 'daily' || s.repeat === 'weekly' || s.repeat === 'monthly') && (
        <div className="row top">
          <Field label={`Every how many ${UNIT[s.repeat]}`}>
            <input type="number" min={1} max={10000} value={s.interval} onChange={(e) => set({ interval: e.target.value })} />
          </Field>
          <Field label="Until (optional)" hint="The last day an occurrence may start, in the window's time zone.">
            <input type="date" value={s.until} onChange={(e) => set({ until: e.target.value })} />
          </Field>
        </div>
      )}
      {s.repeat === 'weekly' && (
        <fieldset className="days" aria-describedby={`${id}-hint`}>
          <legend>On</legend>
          <p id={`${id}-hint`} className="hint small">Each day chosen is saved as a window of its own, first on that day at the start's time.</p>
          <div className="row">
            {WEEKDAYS.map((d, i) => (
              <label key={d} className="check">
                <input type="checkbox" checked={days.includes(d)} onChange={(e) => toggleDay(d, e.target.checked)} />
                {WEEKDAY_NAMES[i]}
              </label>
            ))}
          </div>
        </fieldset>
      )}
    </>
  );
}
