import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../lib/api';
import { accountKeys } from '../../lib/queries-account';
import { formatDateTime, formatRelative } from '../../lib/format';
import { FormError } from '../../components/FormError';
import { describeAgent } from './agent';

/** One signed-in session: where and when, and a way to end it (the current one is ended by signing out). */
export function SessionRow({ session: s }: { session: Schema<'Session'> }) {
  const qc = useQueryClient();
  const agent = describeAgent(s.userAgent);
  const revoke = useMutation({
    mutationFn: () => ok(api.DELETE('/sessions/{id}', { params: { path: { id: s.id } } })),
    onSuccess: () => void qc.invalidateQueries({ queryKey: accountKeys.sessions }),
  });
  return (
    <li>
      <div className="spread">
        <span>
          <strong title={s.userAgent ?? undefined}>{agent}</strong>
          {s.current && <>{' '}<span className="status up small tag">This session</span></>}
          <br />
          <span className="muted small">
            {s.ipAddress ?? 'Unknown address'} · signed in {formatDateTime(s.createdAt)} · last active {formatRelative(s.lastSeenAt)}
          </span>
        </span>
        {!s.current && (
          <button type="button" className="secondary" disabled={revoke.isPending} onClick={() => revoke.mutate()}
            aria-label={`Sign out ${agent}, signed in ${formatDateTime(s.createdAt)}`}>Sign out</button>
        )}
      </div>
      <FormError error={revoke.error} />
    </li>
  );
}
