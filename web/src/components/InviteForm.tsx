import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { q } from '../lib/queries';
import { peopleKeys, ROLES, roleLabel, type Role } from '../lib/queries-people';
import { useMe } from '../lib/me';
import { Field } from './Field';
import { FormError, reasonAt } from './FormError';
import { WorkspacePicker } from './WorkspaceReach';

/**
 * Invites a person by e-mail with a role, optionally confined to workspaces.
 * Every role is offered: the server says which the caller may grant
 * (`role_above_own`), and its words are shown here.
 */
export function InviteForm() {
  const { confined } = useMe();
  const qc = useQueryClient();
  const workspaces = useQuery(q.workspaces());
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [workspaceIds, setWorkspaceIds] = useState<string[]>([]);
  const invite = useMutation({
    mutationFn: () => ok(api.POST('/members', { body: { email: email.trim(), role, ...(workspaceIds.length ? { workspaceIds } : {}) } })),
    onSuccess: () => { setEmail(''); setWorkspaceIds([]); void qc.invalidateQueries({ queryKey: peopleKeys.members }); },
  });
  const submit = (ev: FormEvent) => { ev.preventDefault(); invite.mutate(); };
  const sent = invite.data?.data;
  return (
    <section className="card" aria-labelledby="invite-title">
      <h3 id="invite-title">Invite a person</h3>
      <form onSubmit={submit}>
        <Field label="E-mail address" error={reasonAt(invite.error, 'email')}>
          <input type="email" required maxLength={320} autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Role" hint="Owners and admins manage people and workspaces; members build and operate monitoring; viewers read." error={reasonAt(invite.error, 'role')}>
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map(([r, label]) => <option key={r} value={r}>{label}</option>)}
          </select>
        </Field>
        {workspaces.data && (
          <WorkspacePicker workspaces={workspaces.data} value={workspaceIds} onChange={setWorkspaceIds} confined={confined} error={reasonAt(invite.error, 'workspaceIds')} />
        )}
        <FormError error={invite.error} fields={['email', 'role', 'workspaceIds']} />
        <button type="submit" disabled={invite.isPending}>{invite.isPending ? 'Sending…' : 'Send the invitation'}</button>
      </form>
      <p role="status" className="small">
        {sent && !invite.isPending && !invite.error ? `Invited ${sent.email} as ${roleLabel(sent.role)}: the e-mailed link works once, for 7 days.` : ''}
      </p>
    </section>
  );
}
