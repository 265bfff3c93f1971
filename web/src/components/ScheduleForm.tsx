import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { changedFields, isEmpty } from '../lib/changes';
import type { Person } from '../lib/oncall';
import { browserZone, zoneList } from '../lib/zones';
import { Field } from './Field';
import { FormError, reasonAt } from './FormError';
import { ParticipantPicker } from './ParticipantPicker';

/** The fields this form shows a refusal at. */
const SHOWN = /^(name|timezone|shiftLengthHours|handoffTime|workspaceId|participantIds(\.\d+)?)$/;

type Schedule = Schema<'Schedule'>;

/** The fields an edit may change, as the form holds them (its workspace is not among them). */
const editable = (s: Schedule) => ({
  name: s.name, timezone: s.timezone, shiftLengthHours: s.shiftLengthHours, handoffTime: s.handoffTime, participantIds: s.participants.map((p) => p.userId),
});

/**
 * Create a schedule, or change one in place (updateSchedule: it keeps its id,
 * its covers and the steps that page it; only the fields changed are sent).
 */
export function ScheduleForm({ existing, members, workspaces, confined }: {
  existing: Schedule | null; members: Person[]; workspaces: Schema<'Workspace'>[]; confined: boolean;
}) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState(existing?.name ?? '');
  const [timezone, setTimezone] = useState(existing?.timezone ?? browserZone());
  const [shift, setShift] = useState(String(existing?.shiftLengthHours ?? 168));
  const [handoff, setHandoff] = useState(existing?.handoffTime ?? '09:00');
  const [participants, setParticipants] = useState<string[]>(existing?.participants.map((p) => p.userId) ?? []);
  // A confined caller has no organisation-wide choice: the server would refuse it.
  const [workspaceId, setWorkspaceId] = useState(existing ? existing.workspaceId ?? '' : confined ? workspaces[0]?.id ?? '' : '');
  const save = useMutation({
    mutationFn: async () => {
      const fields = { name, timezone, shiftLengthHours: Number(shift), handoffTime: handoff, participantIds: participants };
      if (!existing) return void await ok(api.POST('/on-call/schedules', { body: { ...fields, workspaceId: workspaceId || null } }));
      const change = changedFields(editable(existing), fields);
      if (!isEmpty(change)) await ok(api.PATCH('/on-call/schedules/{id}', { params: { path: { id: existing.id } }, body: change }));
    },
    onSuccess: () => navigate('/on-call'),
    onSettled: () => qc.invalidateQueries({ queryKey: keys.onCall }),
  });
  const restarts = existing && (timezone !== existing.timezone || Number(shift) !== existing.shiftLengthHours || handoff !== existing.handoffTime
    || participants.join() !== existing.participants.map((p) => p.userId).join());
  const e = save.error;
  const [noOne, setNoOne] = useState(false);
  // An empty rotation is refused here, where the reason can be said in words, before the server's schema would.
  const submit = (ev: FormEvent) => { ev.preventDefault(); setNoOne(participants.length === 0); if (participants.length) save.mutate(); };
  return (
    <form onSubmit={submit} className="card editor">
      {restarts && <p className="notice small">Saving restarts the rotation from now: the first participant is on call from the last handoff. Covers are kept and still come first.</p>}
      <Field label="Name" error={reasonAt(e, 'name')}>
        <input required maxLength={100} value={name} onChange={(x) => setName(x.target.value)} />
      </Field>
      <ParticipantPicker members={members} value={participants} onChange={setParticipants}
        error={(noOne && !participants.length ? 'Add at least one person.' : null) ?? reasonAt(e, 'participantIds') ?? participants.map((_, i) => reasonAt(e, `participantIds.${i}`)).find(Boolean) ?? null} />
      <Field label="Shift length (hours)" hint="24 for daily shifts, 168 for weekly; 1 to 720." error={reasonAt(e, 'shiftLengthHours')}>
        <input type="number" required min={1} max={720} step={1} value={shift} onChange={(x) => setShift(x.target.value)} />
      </Field>
      <Field label="Handoff time" hint="When one shift hands over to the next, in the schedule's time zone." error={reasonAt(e, 'handoffTime')}>
        <input type="time" required value={handoff} onChange={(x) => setHandoff(x.target.value)} />
      </Field>
      <Field label="Time zone" hint="The handoff keeps its local time across daylight-saving changes." error={reasonAt(e, 'timezone')}>
        <select value={timezone} onChange={(x) => setTimezone(x.target.value)}>
          {zoneList(timezone).map((z) => <option key={z} value={z}>{z}</option>)}
        </select>
      </Field>
      <Field label="For" error={reasonAt(e, 'workspaceId')}
        hint={existing ? 'A schedule stays where it was created.' : 'A schedule of one workspace, or of the whole organisation.'}>
        <select value={workspaceId} disabled={!!existing} onChange={(x) => setWorkspaceId(x.target.value)}>
          {(!confined || existing?.workspaceId === null) && <option value="">The whole organisation</option>}
          {workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
        </select>
      </Field>
      <FormError error={e} shownAt={(f) => SHOWN.test(f)} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>{existing ? 'Save the schedule' : 'Create the schedule'}</button>
        <button type="button" className="secondary" onClick={() => navigate('/on-call')}>Cancel</button>
      </div>
    </form>
  );
}
