import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ok, VigilApiError } from '../../lib/api';
import { qa } from '../../lib/queries-account';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { FormError } from '../../components/FormError';
import { SessionRow } from './SessionRow';

/**
 * Where the person is signed in. "Sign out everywhere" ends every other
 * session and then this one (the contract ends sessions one at a time),
 * and lands on the sign-in page.
 */
export function Sessions() {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const sessions = useQuery(qa.sessions());
  const everywhere = useMutation({
    mutationFn: async () => {
      // Read afresh: a session signed in since this page loaded is ended too.
      const all = await ok(api.GET('/sessions'));
      for (const s of all.data.filter((x) => !x.current)) {
        try {
          await ok(api.DELETE('/sessions/{id}', { params: { path: { id: s.id } } }));
        } catch (e) {
          // One that ended meanwhile (expired, or signed out there) is not a failure.
          if (!(e instanceof VigilApiError && e.status === 404)) throw e;
        }
      }
      await ok(api.DELETE('/sessions/{id}', { params: { path: { id: 'current' } } }));
    },
    onSuccess: () => { qc.clear(); navigate('/sign-in', { replace: true }); },
  });
  return (
    <section className="card" aria-labelledby="sessions">
      <div className="spread">
        <h2 id="sessions">Sessions</h2>
        <button type="button" className="secondary" disabled={everywhere.isPending} onClick={() => everywhere.mutate()}>Sign out everywhere</button>
      </div>
      <FormError error={everywhere.error} />
      {sessions.isPending ? <Loading label="Loading your sessions" />
        : sessions.isError ? <ErrorView error={sessions.error} retry={() => void sessions.refetch()} />
          : <ul className="plain" aria-label="Signed-in sessions">{sessions.data.map((s) => <SessionRow key={s.id} session={s} />)}</ul>}
    </section>
  );
}
