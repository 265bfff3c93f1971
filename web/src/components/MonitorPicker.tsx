import { useId, useState } from 'react';
import type { Schema } from '../lib/api';

/** At most this many unchosen monitors are listed: a filter narrows the rest (an organisation may have thousands). */
const SHOWN = 30;

/** Monitors to choose by ticking, with a filter by name; the chosen stay listed first. */
export function MonitorPicker({ monitors, value, onChange, hint, error }: {
  monitors: Schema<'Monitor'>[]; value: string[]; onChange: (ids: string[]) => void; hint: string; error: string | null;
}) {
  const id = useId();
  const [filter, setFilter] = useState('');
  const f = filter.trim().toLowerCase();
  const chosen = monitors.filter((m) => value.includes(m.id));
  const others = monitors.filter((m) => !value.includes(m.id) && (!f || m.name.toLowerCase().includes(f)));
  const toggle = (mid: string, on: boolean) => onChange(on ? [...value, mid] : value.filter((x) => x !== mid));
  const box = (m: Schema<'Monitor'>) => (
    <li key={m.id}>
      <label className="check"><input type="checkbox" checked={value.includes(m.id)} onChange={(e) => toggle(m.id, e.target.checked)} />{m.name}</label>
    </li>
  );
  return (
    <fieldset className="field" aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}>
      <legend>Monitors</legend>
      <span id={`${id}-hint`} className="hint">{hint}</span>
      {monitors.length === 0 ? <p className="muted small">No monitor yet.</p> : (
        <>
          <label htmlFor={`${id}-filter`} className="visually-hidden">Find monitors</label>
          <input id={`${id}-filter`} type="search" placeholder="Find monitors" value={filter} onChange={(e) => setFilter(e.target.value)} />
          <ul className="plain picks">
            {chosen.map(box)}
            {others.slice(0, SHOWN).map(box)}
          </ul>
          {others.length > SHOWN && <p className="muted small">{others.length - SHOWN} more: narrow the filter.</p>}
        </>
      )}
      {error && <span id={`${id}-error`} className="error small">{error}</span>}
    </fieldset>
  );
}
