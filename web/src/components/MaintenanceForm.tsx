import { useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { DateTime } from 'luxon';
import { api, ok, VigilApiError, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { changedFields, isEmpty } from '../lib/changes';
import { plan, scheduleOf, WEEKDAYS, type PlannedWindow, type Schedule } from '../lib/maintenance';
import { browserZone, zoneList } from '../lib/zones';
import { Field } from './Field';
import { MonitorPicker } from './MonitorPicker';
import { RecurrenceFields } from './RecurrenceFields';
import { OccurrencePreview } from './OccurrencePreview';

type Window = Schema<'MaintenanceWindow'>;

/** A schedule the form itself cannot send yet (said at the recurrence field). */
class Unsaved extends Error {}

/** A new window starts at the next full hour and lasts an hour. */
function fresh(): Schedule {
  const zone = browserZone();
  const start = DateTime.now().setZone(zone).startOf('hour').plus({ hours: 1 });
  const f = "yyyy-LL-dd'T'HH:mm";
  return { start: start.toFormat(f), end: start.plus({ hours: 1 }).toFormat(f), timezone: zone, repeat: 'none', interval: '1', days: [], until: '', custom: '' };
}

/** The server's reason per field: `monitorIds.3` is said at the monitors, naming the monitor. */
function fieldErrors(e: unknown, names: Map<string, string>, sent: string[]): Record<string, string> {
  if (!(e instanceof VigilApiError) || !e.details) return {};
  const out: Record<string, string> = {};
  const all = e.details.fields.length ? e.details.fields : [{ field: e.details.field, reason: e.details.reason }];
  for (const f of all) {
    const [key, index] = f.field.split('.');
    const which = key === 'monitorIds' && index !== undefined ? names.get(sent[Number(index)] ?? '') ?? sent[Number(index)] : null;
    out[key!] ??= which ? `${which}: ${f.reason}` : f.reason;
  }
  return out;
}

/** The values a save sends besides the schedule: the same shape for a new window and a changed one. */
interface Values {
  title: string; description: string | null; monitorIds: string[]; keepChecking: boolean; showOnStatusPage: boolean; notifySubscribers: boolean;
}

/** The fields of one planned window, as createMaintenanceWindow and updateMaintenanceWindow take them. */
function fieldsOf(v: Values, timezone: string, w: PlannedWindow) {
  const description = v.description?.trim() ? v.description : null;
  return { title: v.title, description, monitorIds: v.monitorIds, timezone, keepChecking: v.keepChecking, showOnStatusPage: v.showOnStatusPage, notifySubscribers: v.notifySubscribers, ...w };
}

/**
 * The planned window that stays the edited one (keeps its id): the one on the
 * weekday it started on, else the first; a weekly plan's other days become
 * windows of their own.
 */
function keptOf(windows: PlannedWindow[], was: PlannedWindow, zone: string): PlannedWindow {
  const day = (iso: string) => DateTime.fromISO(iso, { zone }).weekday;
  return windows.find((w) => day(w.startsAt) === day(was.startsAt)) ?? windows[0]!;
}

/**
 * Creates a window, or changes one in place (updateMaintenanceWindow: it
 * keeps its id, and a window in progress stays so while its new times hold
 * the present). An edit sends only the fields changed since the form opened.
 */
export function MaintenanceForm({ existing, workspaces, monitors }: {
  existing: Window | null; workspaces: Schema<'Workspace'>[]; monitors: Schema<'Monitor'>[];
}) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [title, setTitle] = useState(existing?.title ?? '');
  const [description, setDescription] = useState(existing?.description ?? '');
  const [workspaceId, setWorkspaceId] = useState(existing?.workspaceId ?? workspaces.find((w) => w.isDefault)?.id ?? workspaces[0]?.id ?? '');
  const [monitorIds, setMonitorIds] = useState<string[]>(existing?.monitorIds ?? []);
  const [schedule, setSchedule] = useState<Schedule>(() => (existing ? scheduleOf(existing) : fresh()));
  const [keepChecking, setKeepChecking] = useState(existing?.keepChecking ?? true);
  const [showOnStatusPage, setShowOnStatusPage] = useState(existing?.showOnStatusPage ?? true);
  const [notifySubscribers, setNotifySubscribers] = useState(existing?.notifySubscribers ?? false);
  // What the form showed when it opened, in the shape it saves: the edit sends what differs from it.
  const [loaded] = useState(() => {
    if (!existing) return null;
    const s = scheduleOf(existing);
    const window = plan(s).windows[0]!;
    return { window, fields: fieldsOf(existing, s.timezone, window) };
  });
  const set = (patch: Partial<Schedule>) => setSchedule((s) => ({ ...s, ...patch }));

  const zones = useMemo(() => zoneList(schedule.timezone), [schedule.timezone]);
  const inWorkspace = useMemo(() => monitors.filter((m) => m.workspace.id === workspaceId), [monitors, workspaceId]);
  const names = useMemo(() => new Map(monitors.map((m) => [m.id, m.name])), [monitors]);
  const planned = useMemo(() => plan(schedule), [schedule]);
  const startDay = useMemo(() => {
    const dt = DateTime.fromISO(schedule.start, { zone: schedule.timezone });
    return dt.isValid ? WEEKDAYS[dt.weekday - 1]! : null;
  }, [schedule.start, schedule.timezone]);

  const save = useMutation({
    mutationFn: async () => {
      if (planned.problem) throw new Unsaved(planned.problem);
      const values: Values = { title, description, monitorIds, keepChecking, showOnStatusPage, notifySubscribers };
      const kept = loaded ? keptOf(planned.windows, loaded.window, schedule.timezone) : null;
      const made: Window[] = [];
      try {
        for (const w of planned.windows.filter((x) => x !== kept)) {
          made.push((await ok(api.POST('/maintenance', { body: { ...fieldsOf(values, schedule.timezone, w), workspaceId } }))).data);
        }
        if (existing && loaded && kept) {
          const change = changedFields(loaded.fields, fieldsOf(values, schedule.timezone, kept));
          if (!isEmpty(change)) await ok(api.PATCH('/maintenance/{id}', { params: { path: { id: existing.id } }, body: change }));
        }
      } catch (e) {
        // All the days of a weekly plan or none: the ones already made are taken back.
        for (const m of made) await ok(api.DELETE('/maintenance', { params: { query: { id: m.id } } })).catch(() => undefined);
        throw e;
      }
    },
    onSuccess: () => navigate('/maintenance'),
    onSettled: () => void qc.invalidateQueries({ queryKey: keys.maintenance }),
  });
  const errors = fieldErrors(save.error, names, monitorIds);
  // A refused field the form has no place for is said in the banner, with the server's words.
  const placed = new Set(['title', 'description', 'monitorIds', 'timezone', 'startsAt', 'endsAt', 'recurrenceRule', ...(workspaces.length > 1 ? ['workspaceId'] : [])]);
  const unplaced = Object.entries(errors).filter(([k]) => !placed.has(k));
  const general = save.error && Object.keys(errors).length === 0 && !(save.error instanceof Unsaved) ? save.error.message : null;
  const submit = (e: FormEvent) => { e.preventDefault(); save.mutate(); };
  const single = workspaces.length <= 1;

  return (
    <form onSubmit={submit} aria-labelledby="form-title">
      <h1 id="form-title">{existing ? `Edit ${existing.title}` : 'New maintenance window'}</h1>
      <section className="card">
        <Field label="Title" hint="Shown on status pages when the window is." error={errors.title}>
          <input required maxLength={200} value={title} onChange={(e) => setTitle(e.target.value)} />
        </Field>
        <Field label="Description (optional)" hint="What is done and why; up to 5,000 characters." error={errors.description}>
          <textarea className="prose" maxLength={5000} value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        {!single && (
          <Field label="Workspace" error={errors.workspaceId}
            hint={existing ? 'A window stays in its workspace: to move it, plan it in the other workspace and delete this one.' : undefined}>
            <select value={workspaceId} disabled={!!existing} onChange={(e) => { setWorkspaceId(e.target.value); setMonitorIds([]); }}>
              {workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
            </select>
          </Field>
        )}
        <MonitorPicker monitors={inWorkspace} selected={monitorIds} onChange={setMonitorIds} error={errors.monitorIds} />
      </section>
      <section className="card" aria-labelledby="when-title">
        <h2 id="when-title">When</h2>
        <Field label="Time zone" hint="The window repeats at the same local time in this zone; the start and end below are read in it." error={errors.timezone}>
          <select value={schedule.timezone} onChange={(e) => set({ timezone: e.target.value })}>
            {zones.map((z) => <option key={z} value={z}>{z}</option>)}
          </select>
        </Field>
        <div className="row top">
          <Field label="Starts" error={errors.startsAt}>
            <input type="datetime-local" required value={schedule.start} onChange={(e) => set({ start: e.target.value })} />
          </Field>
          <Field label="Ends" error={errors.endsAt}>
            <input type="datetime-local" required value={schedule.end} onChange={(e) => set({ end: e.target.value })} />
          </Field>
        </div>
        <RecurrenceFields schedule={schedule} set={set} startDay={startDay}
          error={errors.recurrenceRule ?? (save.error instanceof Unsaved ? save.error.message : null)} />
      </section>
      <OccurrencePreview plan={planned} timezone={schedule.timezone} />
      <section className="card" aria-labelledby="during-title">
        <h2 id="during-title">During the window</h2>
        <p className="small">Nobody is paged for these monitors.</p>
        <fieldset className="choices-plain">
          <legend>Checks</legend>
          <label className="check"><input type="radio" name="keepChecking" checked={keepChecking} onChange={() => setKeepChecking(true)} />Keep checking: the minutes are recorded and count toward uptime</label>
          <label className="check"><input type="radio" name="keepChecking" checked={!keepChecking} onChange={() => setKeepChecking(false)} />Pause checks: nothing is checked, the history has a gap</label>
        </fieldset>
        <label className="check"><input type="checkbox" checked={showOnStatusPage} onChange={(e) => setShowOnStatusPage(e.target.checked)} />Show on status pages</label>
        <label className="check"><input type="checkbox" checked={notifySubscribers} onChange={(e) => setNotifySubscribers(e.target.checked)} />Tell status-page subscribers when it is planned and when it starts</label>
      </section>
      {existing?.active && <p className="muted small">This window is in progress: it stays in progress, with the same address, as long as its new times include now.</p>}
      {existing && notifySubscribers && <p className="muted small">Subscribers are told again when the times change before the next occurrence starts.</p>}
      {general && <p role="alert" className="error">{general}</p>}
      {unplaced.map(([k, reason]) => <p key={k} role="alert" className="error">{k}: {reason}</p>)}
      {Object.keys(errors).length > 0 && <p role="alert" className="error">Some fields need another look.</p>}
      <div className="row">
        <button type="submit" disabled={save.isPending}>{existing ? 'Save changes' : 'Create the window'}</button>
        <button type="button" className="secondary" onClick={() => navigate('/maintenance')}>Cancel</button>
      </div>
    </form>
  );
}
