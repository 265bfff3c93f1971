import { useMe } from '../lib/me';
import { roleLabel } from '../lib/queries-people';
import { useSwitchOrganization } from './OrgSwitcher';
import { FormError } from './FormError';

/** The person's organisations (from /me, no read of its own), with their role in each and a way to switch. */
export function YourOrganizations() {
  const { me } = useMe();
  const change = useSwitchOrganization();
  const orgs = me.organizations;
  // A key describes itself only: nothing to list or switch.
  if (!orgs) return null;
  return (
    <section className="card" aria-labelledby="orgs-title">
      <h3 id="orgs-title">Your organisations</h3>
      <ul className="plain">
        {orgs.map((o) => (
          <li key={o.id} className="spread">
            <span><strong>{o.name}</strong> <span className="muted small">{roleLabel(o.role)}</span></span>
            {o.active ? <span className="small">In use now</span>
              : <button type="button" className="secondary" disabled={change.isPending} onClick={() => change.mutate(o.id)} aria-label={`Switch to ${o.name}`}>Switch</button>}
          </li>
        ))}
      </ul>
      <FormError error={change.error} />
    </section>
  );
}
