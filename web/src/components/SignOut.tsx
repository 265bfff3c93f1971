import { useNavigate } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { useMe } from '../lib/me';

/** Signs out (ends the current session; a key cannot). */
export function SignOut() {
  const { me } = useMe();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const out = useMutation({
    mutationFn: () => ok(api.DELETE('/sessions/{id}', { params: { path: { id: 'current' } } })),
    onSettled: () => { qc.clear(); navigate('/sign-in', { replace: true }); },
  });
  if (me.key) return null;
  return (
    <button type="button" className="secondary" onClick={() => out.mutate()} disabled={out.isPending}>
      Sign out
    </button>
  );
}
