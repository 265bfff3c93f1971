import { useQuery } from '@tanstack/react-query';
import { q } from '../../lib/queries';
import { qp } from '../../lib/queries-people';
import { useMe } from '../../lib/me';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { InviteForm } from '../../components/InviteForm';
import { MemberRow } from '../../components/MemberRow';
import { InvitationRow } from '../../components/InvitationRow';
import { YourOrganizations } from '../../components/YourOrganizations';
import './people.css';

/**
 * Settings → Members: the members and pending invitations the server shows
 * the caller (a confined member sees those reaching its workspaces), an
 * invitation form, and the person's own organisations.
 */
export default function Members() {
  const { can } = useMe();
  const members = useQuery(qp.members());
  const workspaces = useQuery(q.workspaces());
  return (
    <div className="people">
      <h2>Members</h2>
      {members.isPending ? <Loading label="Loading members" />
        : members.isError ? <ErrorView error={members.error} retry={() => void members.refetch()} />
          : (
            <>
              <section className="card" aria-labelledby="members-title">
                <h3 id="members-title">People ({members.data.members.length})</h3>
                <ul className="plain">{members.data.members.map((m) => <MemberRow key={m.id} member={m} workspaces={workspaces.data} />)}</ul>
              </section>
              <section className="card" aria-labelledby="invitations-title">
                <h3 id="invitations-title">Pending invitations</h3>
                {members.data.invitations.length === 0
                  ? <p className="flush">No invitation is waiting. {can('member:invite') ? 'Invite a colleague below: they get an e-mail with a link to join.' : 'Someone who manages people can invite colleagues.'}</p>
                  : <ul className="plain">{members.data.invitations.map((i) => <InvitationRow key={i.email} invitation={i} workspaces={workspaces.data} />)}</ul>}
              </section>
            </>
          )}
      {can('member:invite') && <InviteForm />}
      <YourOrganizations />
    </div>
  );
}
