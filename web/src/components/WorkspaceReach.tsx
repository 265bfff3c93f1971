import type { Schema } from '../lib/api';

/** Where a person or an invitation acts, in words: every workspace, or the named ones (an id the caller cannot see stays an id). */
export function reachText(ids: string[] | null, workspaces: Schema<'Workspace'>[] | undefined): string {
  if (ids === null) return 'All workspaces';
  const names = ids.map((id) => workspaces?.find((w) => w.id === id)?.name ?? id);
  return `${names.length === 1 ? 'Workspace' : 'Workspaces'}: ${names.join(', ')}`;
}

/** Ticks the workspaces a person is confined to; none ticked is the whole organisation (for a caller that may hand it out). */
export function WorkspacePicker({ workspaces, value, onChange, confined, error }: {
  workspaces: Schema<'Workspace'>[]; value: string[]; onChange: (ids: string[]) => void; confined: boolean; error: string | null;
}) {
  const hintId = 'workspace-picker-hint';
  const errorId = 'workspace-picker-error';
  return (
    <fieldset className="field" aria-describedby={[hintId, error ? errorId : null].filter(Boolean).join(' ')}>
      <legend>Workspaces</legend>
      <span id={hintId} className="hint">
        {confined ? 'Tick at least one of your workspaces: you may invite only into them.' : 'Tick none for every workspace, present and future; tick some to confine the person to them.'}
      </span>
      {workspaces.map((w) => (
        <label key={w.id} className="check">
          <input type="checkbox" checked={value.includes(w.id)} aria-invalid={error ? true : undefined}
            onChange={(e) => onChange(e.target.checked ? [...value, w.id] : value.filter((x) => x !== w.id))} />
          {w.name}
        </label>
      ))}
      {error && <span id={errorId} className="error small">{error}</span>}
    </fieldset>
  );
}
