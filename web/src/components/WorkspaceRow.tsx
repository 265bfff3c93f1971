import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { peopleKeys } from '../lib/queries-people';
import { formatDateTime } from '../lib/format';
import { ConfirmButton } from './ConfirmButton';
import { FormError } from './FormError';
import { WorkspaceForm } from './WorkspaceForm';

/** What a workspace's deletion takes with it, so their cached reads are read again (only those on screen are). */
const HELD_IN_WORKSPACES = [keys.workspaces, keys.monitors, keys.summary, keys.setup, keys.incidents, keys.channels, keys.maintenance, keys.onCall, keys.hosts, peopleKeys.members];

/** One workspace; rename and delete for a caller who may change the organisation's workspaces (`editable`). */
export function WorkspaceRow({ workspace: w, editable }: { workspace: Schema<'Workspace'>; editable: boolean }) {
  const qc = useQueryClient();
  const [renaming, setRenaming] = useState(false);
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/workspaces/{id}', { params: { path: { id: w.id } } })),
    onSuccess: () => { for (const queryKey of HELD_IN_WORKSPACES) void qc.invalidateQueries({ queryKey }); },
  });
  return (
    <li>
      <div className="spread">
        <span>
          <strong>{w.name}</strong> <span className="muted small">{w.slug}{w.clientReference ? ` · client reference ${w.clientReference}` : ''}</span>
        </span>
        <span className="small">{w.isDefault ? 'Default workspace' : <>Created <time dateTime={w.createdAt}>{formatDateTime(w.createdAt)}</time></>}</span>
      </div>
      {editable && !renaming && (
        <div className="row small">
          <button type="button" className="secondary" onClick={() => { remove.reset(); setRenaming(true); }} aria-label={`Rename ${w.name}`}>Rename</button>
          {/* The server refuses the default workspace (409 default_workspace): not offered. */}
          {!w.isDefault && (
            <ConfirmButton label="Delete" name={`Delete ${w.name}`} confirmLabel={`Delete ${w.name}`} pending={remove.isPending} onConfirm={() => remove.mutate()}
              question={`Delete the workspace ${w.name} and everything in it — its monitors with their history and incidents, channels, maintenance windows and on-call rules? This cannot be undone.`} />
          )}
        </div>
      )}
      {editable && renaming && <WorkspaceForm workspace={w} onDone={() => setRenaming(false)} />}
      <FormError error={remove.error} />
    </li>
  );
}
