import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ok } from '../lib/api';
import { useMe } from '../lib/me';

/** Makes another of the person's organisations the active one (the header's menu and Settings → Members use it). */
export function useSwitchOrganization() {
  const qc = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: (organizationId: string) => ok(api.PUT('/organizations/active', { body: { organizationId } })),
    // Everything cached belonged to the other organisation: reset it all; what is on screen is read again.
    onSuccess: () => { navigate('/'); void qc.resetQueries(); },
  });
}

/** The active organisation; a menu to switch for people in several. */
export function OrgSwitcher() {
  const { me } = useMe();
  const orgs = me.organizations ?? [];
  const change = useSwitchOrganization();
  if (orgs.length < 2) return <span className="muted small">{me.organization.name}</span>;
  return (
    <label className="row small">
      <span className="visually-hidden">Organisation</span>
      <select value={me.organization.id} disabled={change.isPending} onChange={(e) => change.mutate(e.target.value)}>
        {orgs.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
      </select>
    </label>
  );
}
