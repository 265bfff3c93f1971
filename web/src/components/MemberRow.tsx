import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { peopleKeys, ROLES, roleLabel, type Member, type Role } from '../lib/queries-people';
import { formatDateTime } from '../lib/format';
import { useMe } from '../lib/me';
import { ConfirmButton } from './ConfirmButton';
import { FormError } from './FormError';
import { reachText } from './WorkspaceReach';

/**
 * One member: who, role, workspaces; a new role and removal for those whose
 * permissions allow them. The last owner and ranks above the caller's are
 * the server's to refuse: its sentence is shown beside the controls.
 */
export function MemberRow({ member: m, workspaces }: { member: Member; workspaces: Schema<'Workspace'>[] | undefined }) {
  const { me, can } = useMe();
  const qc = useQueryClient();
  const [role, setRole] = useState<Role>(m.role as Role);
  const roleId = useId();
  const self = m.id === me.membership.id;
  const who = m.name || m.email;
  const changed = () => {
    void qc.invalidateQueries({ queryKey: peopleKeys.members });
    // Our own role decides what the whole app shows.
    if (self) void qc.invalidateQueries({ queryKey: keys.me });
  };
  const change = useMutation({
    mutationFn: () => ok(api.PATCH('/members/{id}', { params: { path: { id: m.id } }, body: { role } })),
    onSuccess: changed,
  });
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/members/{id}', { params: { path: { id: m.id } } })),
    // hasColleague of the setup checklist counts members.
    onSuccess: () => { changed(); void qc.invalidateQueries({ queryKey: keys.setup }); },
  });
  const submit = (ev: FormEvent) => { ev.preventDefault(); remove.reset(); change.mutate(); };
  const mayRole = can('member:update_role');
  // Leaving an organisation is not offered from one's own row: someone else removes you.
  const mayRemove = can('member:remove') && !self;
  return (
    <li>
      <div className="spread">
        <span>
          <strong>{who}</strong>{self && <span className="muted"> (you)</span>}
          {m.name && <span className="muted small"> {m.email}</span>}
        </span>
        <span className="small"><strong>{roleLabel(m.role)}</strong> · {reachText(m.workspaceIds, workspaces)}</span>
      </div>
      <p className="muted small flush">
        Joined <time dateTime={m.createdAt}>{formatDateTime(m.createdAt)}</time>
        {' · '}{m.lastSeenAt ? <>an API key of theirs last used <time dateTime={m.lastSeenAt}>{formatDateTime(m.lastSeenAt)}</time></> : 'no API key used'}
      </p>
      {(mayRole || mayRemove) && (
        <div className="row small">
          {mayRole && (
            <form className="row" onSubmit={submit}>
              <label htmlFor={roleId} className="visually-hidden">Role of {who}</label>
              <select id={roleId} value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {ROLES.map(([r, label]) => <option key={r} value={r}>{label}</option>)}
              </select>
              <button type="submit" className="secondary" disabled={change.isPending || role === m.role} aria-label={`Change role of ${who}`}>Change role</button>
            </form>
          )}
          {mayRemove && (
            <ConfirmButton label="Remove" name={`Remove ${who}`} confirmLabel={`Remove ${who}`} pending={remove.isPending}
              question={`Remove ${who} from ${me.organization.name}? Their API keys stop working at once and their personal e-mail and SMS channels are deleted.`}
              onConfirm={() => { change.reset(); remove.mutate(); }} />
          )}
          <span role="status">{change.isSuccess && role === m.role ? `Now ${roleLabel(m.role)}.` : ''}</span>
        </div>
      )}
      <FormError error={change.error ?? remove.error} />
    </li>
  );
}
