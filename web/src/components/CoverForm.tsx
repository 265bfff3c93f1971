import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { fromLocalInput, toLocalInput, who, type Person } from '../lib/oncall';
import { browserZone } from '../lib/zones';
import { Field } from './Field';
import { FormError, reasonAt } from './FormError';

/** The fields this form shows a refusal at (a refused schedule goes to the banner). */
const SHOWN = /^(userId|startsAt|endsAt)$/;

/** A cover for one schedule: who, from, to — in the person's own time zone (the browser's). */
export function CoverForm({ schedule, people, onDone }: { schedule: Schema<'Schedule'>; people: Person[]; onDone: () => void }) {
  const qc = useQueryClient();
  const now = Date.now();
  const [userId, setUserId] = useState(people[0]?.userId ?? '');
  const [from, setFrom] = useState(toLocalInput(now));
  const [to, setTo] = useState(toLocalInput(now + 86_400_000));
  const add = useMutation({
    mutationFn: () => ok(api.POST('/on-call/overrides', { body: { scheduleId: schedule.id, userId, startsAt: fromLocalInput(from), endsAt: fromLocalInput(to) } })),
    onSuccess: onDone,
    onSettled: () => qc.invalidateQueries({ queryKey: keys.onCall }),
  });
  const e = add.error;
  const zone = browserZone();
  const submit = (ev: FormEvent) => { ev.preventDefault(); add.mutate(); };
  return (
    <form onSubmit={submit} className="notice editor" aria-label={`Add a cover for ${schedule.name}`}>
      <Field label="Who covers" error={reasonAt(e, 'userId')}>
        <select value={userId} onChange={(x) => setUserId(x.target.value)}>
          {people.map((p) => <option key={p.userId} value={p.userId}>{who(p)}</option>)}
        </select>
      </Field>
      <div className="row wrap-fields">
        <Field label="From" hint={`Your time (${zone}).`} error={reasonAt(e, 'startsAt')}>
          <input type="datetime-local" required value={from} onChange={(x) => setFrom(x.target.value)} />
        </Field>
        <Field label="To" hint={`Your time (${zone}).`} error={reasonAt(e, 'endsAt')}>
          <input type="datetime-local" required value={to} onChange={(x) => setTo(x.target.value)} />
        </Field>
      </div>
      <FormError error={e} shownAt={(f) => SHOWN.test(f)} />
      <div className="row">
        <button type="submit" disabled={add.isPending || !userId}>Add the cover</button>
        <button type="button" className="secondary" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}
