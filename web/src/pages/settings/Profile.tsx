import { useMe } from '../../lib/me';
import { formatDateTime } from '../../lib/format';

/**
 * Who is signed in. The contract has no operation that changes a person's
 * name or address (GET /me only), so they are shown, not edited.
 */
export function Profile() {
  const { me } = useMe();
  const orgs = me.organizations ?? [];
  return (
    <section className="card" aria-labelledby="profile">
      <h2 id="profile">Profile</h2>
      <dl className="facts">
        <dt>Name</dt><dd>{me.user.name ?? <span className="muted">Not set</span>}</dd>
        <dt>E-mail address</dt><dd>{me.user.email}</dd>
        <dt>Member since</dt><dd>{formatDateTime(me.user.createdAt)}</dd>
        <dt>Organisation{orgs.length > 1 ? 's' : ''}</dt>
        <dd>
          {orgs.length > 1
            ? orgs.map((o) => `${o.name} (${o.role}${o.active ? ', in use' : ''})`).join(' · ')
            : `${me.organization.name} (${me.membership.role})`}
        </dd>
      </dl>
    </section>
  );
}
