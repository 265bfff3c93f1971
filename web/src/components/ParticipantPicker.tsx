import { useId, useState } from 'react';
import { who, type Person } from '../lib/oncall';

/**
 * The rotation: members chosen in order, each movable up or down or taken
 * out, and a person to add (`members` names everyone shown, former members too). Buttons (not drag and drop) so the keyboard
 * does everything; `error` is the server's reason (participantIds.N).
 */
export function ParticipantPicker({ members, value, onChange, error }: {
  members: Person[]; value: string[]; onChange: (ids: string[]) => void; error: string | null;
}) {
  const id = useId();
  const [pick, setPick] = useState('');
  const byId = new Map(members.map((m) => [m.userId, m]));
  const left = members.filter((m) => !value.includes(m.userId));
  const chosen = pick && left.some((m) => m.userId === pick) ? pick : left[0]?.userId ?? '';
  const move = (i: number, by: number) => {
    const next = [...value];
    [next[i], next[i + by]] = [next[i + by]!, next[i]!];
    onChange(next);
  };
  const name = (uid: string) => (byId.has(uid) ? who(byId.get(uid)) : uid);
  return (
    <fieldset className="field" aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}>
      <legend>Participants</legend>
      <span id={`${id}-hint`} className="hint">In rotation order: the first is on call from the last handoff, then each in turn.</span>
      {value.length === 0 ? <p className="muted small">Nobody yet: add at least one person.</p> : (
        <ol className="order">
          {value.map((uid, i) => (
            <li key={uid} className="spread">
              <span>{name(uid)}</span>
              <span className="row small">
                <button type="button" className="secondary" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move ${name(uid)} up`}>Up</button>
                <button type="button" className="secondary" disabled={i === value.length - 1} onClick={() => move(i, 1)} aria-label={`Move ${name(uid)} down`}>Down</button>
                <button type="button" className="secondary" onClick={() => onChange(value.filter((x) => x !== uid))} aria-label={`Take out ${name(uid)}`}>Take out</button>
              </span>
            </li>
          ))}
        </ol>
      )}
      {left.length > 0 && (
        <div className="row">
          <label htmlFor={`${id}-add`} className="visually-hidden">Person to add</label>
          <select id={`${id}-add`} value={chosen} onChange={(e) => setPick(e.target.value)}>
            {left.map((m) => <option key={m.userId} value={m.userId}>{who(m)}{m.name ? ` (${m.email})` : ''}</option>)}
          </select>
          <button type="button" className="secondary" onClick={() => { onChange([...value, chosen]); setPick(''); }}>Add to the rotation</button>
        </div>
      )}
      {error && <span id={`${id}-error`} className="error small">{error}</span>}
    </fieldset>
  );
}
