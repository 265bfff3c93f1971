import { useId, useMemo, useState } from 'react';
import type { Schema } from '../lib/api';

/** At most this many rows are drawn; a workspace may hold thousands of monitors, the filter narrows them. */
const SHOWN = 100;

/** Monitors of one workspace to tick, with a filter by name or tag; what is ticked stays ticked while filtering. */
export function MonitorPicker({ monitors, selected, onChange, error, hint }: {
  monitors: Schema<'Monitor'>[]; selected: string[]; onChange: (ids: string[]) => void; error?: string | null;
  /** What choosing means here, under the legend. */
  hint?: string;
}) {
  const id = useId();
  const [filter, setFilter] = useState('');
  const chosen = useMemo(() => new Set(selected), [selected]);
  const matching = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return f ? monitors.filter((m) => m.name.toLowerCase().includes(f) || m.tags.some((t) => t.includes(f))) : monitors;
  }, [monitors, filter]);
  const shown = matching.slice(0, SHOWN);
  const toggle = (mid: string, on: boolean) => onChange(on ? [...selected, mid] : selected.filter((x) => x !== mid));
  const names = monitors.filter((m) => chosen.has(m.id)).map((m) => m.name);
  return (
    <fieldset className="picker" aria-describedby={`${id}-count${error ? ` ${id}-error` : ''}`} aria-invalid={error ? true : undefined}>
      <legend>Monitors</legend>
      {hint && <p className="hint">{hint}</p>}
      <p id={`${id}-count`} className="small">
        {selected.length === 0 ? 'None chosen yet.' : `${selected.length} chosen: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ` and ${names.length - 5} more` : ''}.`}
      </p>
      {error && <p id={`${id}-error`} className="error small">{error}</p>}
      {monitors.length === 0 ? <p className="muted">This workspace has no monitor yet: create one first.</p> : (
        <>
          <div className="row">
            <label htmlFor={`${id}-filter`} className="visually-hidden">Filter monitors</label>
            <input id={`${id}-filter`} type="search" placeholder="Filter by name or tag" value={filter} onChange={(e) => setFilter(e.target.value)} />
            <button type="button" className="secondary" disabled={shown.length === 0}
              onClick={() => onChange([...new Set([...selected, ...shown.map((m) => m.id)])])}>Choose all shown</button>
            <button type="button" className="secondary" disabled={selected.length === 0} onClick={() => onChange([])}>Clear</button>
          </div>
          <ul className="choices">
            {shown.map((m) => (
              <li key={m.id}>
                <label className="check">
                  <input type="checkbox" checked={chosen.has(m.id)} onChange={(e) => toggle(m.id, e.target.checked)} />
                  {m.name}
                </label>
              </li>
            ))}
          </ul>
          <p className="muted small" aria-live="polite">
            {matching.length === 0 ? 'No monitor matches.' : matching.length > SHOWN ? `Showing ${SHOWN} of ${matching.length.toLocaleString()} matching: narrow the filter to find the others.` : `${matching.length} shown.`}
          </p>
        </>
      )}
    </fieldset>
  );
}
