import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { peopleKeys, roleLabel, type Invitation, type Role } from '../lib/queries-people';
import { formatDateTime } from '../lib/format';
import { useMe } from '../lib/me';
import { FormError } from './FormError';
import { reachText } from './WorkspaceReach';

/**
 * A pending invitation. Resending invites the address again with the same
 * role and workspaces (the contract's way: a new link replaces the earlier
 * one); withdrawing makes the link stop working.
 */
export function InvitationRow({ invitation: i, workspaces }: { invitation: Invitation; workspaces: Schema<'Workspace'>[] | undefined }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const changed = () => void qc.invalidateQueries({ queryKey: peopleKeys.members });
  const resend = useMutation({
    mutationFn: () => ok(api.POST('/members', { body: { email: i.email, role: i.role as Role, ...(i.workspaceIds ? { workspaceIds: i.workspaceIds } : {}) } })),
    onSuccess: changed,
  });
  const withdraw = useMutation({
    mutationFn: () => ok(api.DELETE('/invitations/{id}', { params: { path: { id: i.id } } })),
    onSuccess: changed,
  });
  return (
    <li>
      <div className="spread">
        <strong>{i.email}</strong>
        <span className="small"><strong>{roleLabel(i.role)}</strong> · {reachText(i.workspaceIds, workspaces)}</span>
      </div>
      <p className="muted small flush">
        {i.invitedBy ? `Invited by ${i.invitedBy}` : 'Invited'} <time dateTime={i.createdAt}>{formatDateTime(i.createdAt)}</time>
        {' · '}the link expires <time dateTime={i.expiresAt}>{formatDateTime(i.expiresAt)}</time>
      </p>
      {can('member:invite') && (
        <div className="row small">
          <button type="button" className="secondary" disabled={resend.isPending || withdraw.isPending}
            onClick={() => { withdraw.reset(); resend.mutate(); }} aria-label={`Resend the invitation to ${i.email}`}>Resend</button>
          <button type="button" className="secondary" disabled={resend.isPending || withdraw.isPending}
            onClick={() => { resend.reset(); withdraw.mutate(); }} aria-label={`Withdraw the invitation to ${i.email}`}>Withdraw</button>
          <span role="status">{resend.isPending ? 'Sending…' : resend.isSuccess ? 'Sent again: only the new link works.' : ''}</span>
        </div>
      )}
      <FormError error={resend.error ?? withdraw.error} />
    </li>
  );
}
